# session 50, call 8 (from the repository root, .whl carried): after the one-pass check for
# scheme none (63f96ea), the step of 2 Qwen3-30B-A3B layers per scheme (twice), and the layers
# bench at 32 x 1024
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 100 python3 docs/results/swiglu_h200_2026-11-29/layer_times.py none+grouped w4a16 \
  fp8-block int8 2>&1 | grep -v "Warning\|warn" | tee $OUT/call8_layer_times.txt
timeout 150 python3 tools/bench_megatron_layers.py --batch 32 --steps 4 --warmup 2 \
  --tiny-steps 1 --schemes none,w4a16,fp8-block,int8 --grouped-bf16 \
  --out $OUT/call8_megatron_layers_b32.json 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call8_layers_b32.txt
