# Call 2 (nvidia-h200): the Megatron-layer step comparison at HEAD (issue 9 asks for it re-run
# after kernel changes; last run at 4e177cb, session 51), 200M model at 4 x 1024 and 32 x 1024
# tokens, and 2 exact Qwen3-30B-A3B layers at 8 x 1024 (session 50's layer_times.py).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log --oneline -1
S="--schemes none,w4a16,fp8-block,int8 --grouped-bf16"
timeout 170 python3 tools/bench_megatron_layers.py --batch 32 --steps 4 --warmup 2 --tiny-steps 1 $S \
  --out $OUT/call2_layers_b32.json 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_layers_b32.txt
timeout 170 python3 tools/bench_megatron_layers.py --steps 8 --warmup 3 --tiny-steps 8 $S \
  --out $OUT/call2_layers_b4.json 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_layers_b4.txt
timeout 150 python3 docs/results/swiglu_h200_2026-11-29/layer_times.py none+grouped w4a16 \
  fp8-block int8 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_layer_times.txt
