# session 56, call 3 (from the repository root, .whl carried with .whl/kernels_main = the kernels
# at 505195e): GPU tests of the FP8 grouped kernels with the three-consumer tiles, then three
# consumers against two, and against the old kernel, in interleaved rounds
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_old
R=docs/results/fp8_grouped_l2_h200_2026-11-30
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call3_gpu.txt
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_fp8_grouped_ws.py \
  tests/kernels/test_fp8.py > $OUT/call3_pytest.txt 2>&1
echo pytest rc=$?; tail -3 $OUT/call3_pytest.txt
timeout 330 python3 $R/consumers_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call3_ab.txt
