# Call 2 (nvidia-h100-x1): the W4A16 decode section (weight copies counted from the touched
# experts' bytes since session 75) into a copy of docs/benchmarks.md, then the Megatron-layer
# step comparison (issue 9 asks for it re-run): the 200M model at 32 x 1024 tokens and 2 exact
# Qwen3-30B-A3B layers at 8 x 1024 (session 50's layer_times.py).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
/usr/bin/time -f "decode %e s" timeout 230 python -m qarl_kernels.bench --decode-only --doc $OUT/benchmarks.md \
  > $OUT/call2_decode.txt 2>&1; echo "decode rc=$?"; grep -c MISMATCH $OUT/call2_decode.txt
grep -i "Checked\| s$" $OUT/call2_decode.txt | tail -3
S="--schemes none,w4a16,fp8-block,int8 --grouped-bf16"
timeout 170 python3 tools/bench_megatron_layers.py --batch 32 --steps 4 --warmup 2 --tiny-steps 1 $S \
  --out $OUT/call2_layers_b32.json 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_layers_b32.txt | tail -12
timeout 150 python3 docs/results/swiglu_h200_2026-11-29/layer_times.py none+grouped w4a16 \
  fp8-block int8 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_layer_times.txt | tail -12
