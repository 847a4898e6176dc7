# session 56, call 4 (from the repository root, .whl carried with .whl/kernels_main = the kernels
# at 505195e): the Gluon kernels' tests with the expert tables padded to a warp, then the A/B
# against 505195e's kernels (table_size_ab.py)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_old
R=docs/results/fp8_grouped_l2_h200_2026-11-30
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call4_gpu.txt
timeout 240 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels/test_w4a16_gluon.py \
  tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_w4a16_grouped_ws.py \
  tests/kernels/test_w4a16_gemm.py > $OUT/call4_pytest.txt 2>&1
echo pytest rc=$?; tail -3 $OUT/call4_pytest.txt
timeout 300 python3 $R/table_size_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call4_ab.txt
