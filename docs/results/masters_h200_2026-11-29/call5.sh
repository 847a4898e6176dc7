# session 51, call 5 (.whl carried): the tree of calls 2-3's kernels again (call 4's FP8 grid
# order reverted): the Megatron-layer comparison, 2 exact Qwen3-30B-A3B layers and 200M at b32
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 40 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_fp8.py 2>&1 \
  | tail -2 | tee $OUT/call5_pytest.txt
timeout 100 python3 docs/results/swiglu_h200_2026-11-29/layer_times.py none+grouped w4a16 \
  fp8-block int8 2>&1 | grep -v "Warning\|warn" | tee $OUT/call5_layer_times.txt
timeout 150 python3 tools/bench_megatron_layers.py --batch 32 --steps 4 --warmup 2 \
  --tiny-steps 1 --schemes none,w4a16,fp8-block,int8 --grouped-bf16 \
  --out $OUT/call5_megatron_layers_b32.json 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call5_layers_b32.txt
