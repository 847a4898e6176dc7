# session 47, call 1 (from the repository root, .whl carried): the W4A16 quantizer writing the
# lane order beside the codes: its tests and the Hopper kernels' that read the memo; `bench
# --only quantize` (codes only and with the lane order); lanes_ab.py (the kernels; the
# training step A B B A)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels/test_w4a16_quantize.py \
  tests/kernels/test_w4a16_lanes.py tests/kernels/test_w4a16_grouped_ws.py \
  tests/kernels/test_moe_backward.py tests/megatron/test_cache.py 2>&1 | tail -4 \
  | tee $OUT/call1_pytest.txt
cp docs/benchmarks.md $OUT/
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | tee $OUT/call1_quantize.txt | tail -14
timeout 240 python3 docs/results/lanes_h200_2026-11-29/lanes_ab.py 6 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call1_ab.txt
