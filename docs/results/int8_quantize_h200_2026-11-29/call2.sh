# session 53, call 2 (as call 1, at the same tree): the INT8 row quantizer's block swept over
# 256-2048 values, and the W2 quantizers' times over six fresh allocations
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/int8_quantize_h200_2026-11-29
timeout 200 python3 $R/int8_blocks.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_int8_blocks.txt
timeout 150 python3 $R/fp8_placement.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_fp8_placement.txt
