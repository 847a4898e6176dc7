# session 41, call 7 (from the repository root, .whl carried): GPU tests of the W4A16 kernels,
# their routing and the Megatron layers at the final kernel, then Nsight Compute on it (W2 and
# W13 E128 M=4096)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 300 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 \
  tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_w4a16_gemm.py \
  tests/kernels/test_w4a16_operand.py tests/megatron > $OUT/pytest.txt 2>&1
echo pytest rc=$?; tail -3 $OUT/pytest.txt
for s in W2E128 W13E128; do
  timeout 100 ncu --clock-control none -k regex:_w4a16_grouped_ws_kernel --launch-skip 2 \
    --launch-count 1 --set full --import-source no -f -o $OUT/ws_$s \
    python3 -m qarl_kernels.profile_case $s 4096 > $OUT/ncu_$s.log 2>&1
  echo ncu $s rc=$?
  ncu -i $OUT/ws_$s.ncu-rep --page details > $OUT/details_$s.txt 2>&1
  ncu -i $OUT/ws_$s.ncu-rep --page source --csv --print-source sass > $OUT/sass_$s.csv 2>&1
  rm -f $OUT/ws_$s.ncu-rep
done
