# session 50, call 2 (from the repository root, .whl carried): the step A/B on 2 exact
# Qwen3-30B-A3B layers, and the layers bench at this tree (tiles of call 1's sweep committed),
# the 32 x 1024 run with its kernel profile
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 240 python3 docs/results/swiglu_h200_2026-11-29/swiglu_ab.py 5 30b 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call2_ab_30b.txt
timeout 150 python3 tools/bench_megatron_layers.py --steps 8 --warmup 3 --tiny-steps 8 \
  --schemes none,w4a16,fp8-block,int8 --grouped-bf16 --out $OUT/call2_megatron_layers_b4.json \
  2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_layers_b4.txt
timeout 180 python3 tools/bench_megatron_layers.py --batch 32 --steps 4 --warmup 2 \
  --tiny-steps 1 --schemes none,w4a16,fp8-block,int8 --grouped-bf16 --profile 2 \
  --out $OUT/call2_megatron_layers_b32.json 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call2_layers_b32.txt
