# session 41, call 2 (from the repository root): Nsight Compute on the WS kernel at W2 and W13
# E128 M=4096 (profile_case now calls the op, which routes 256 rows per expert to it)
export PYTHONPATH=/tmp/pp:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for s in W2E128 W13E128; do
  timeout 150 ncu --clock-control none -k regex:_w4a16_grouped_ws_kernel --launch-skip 2 \
    --launch-count 1 --set full --import-source no -f -o $OUT/ws_$s \
    python3 -m qarl_kernels.profile_case $s 4096 > $OUT/ncu_$s.log 2>&1
  echo ncu $s rc=$?; tail -1 $OUT/ncu_$s.log
  ncu -i $OUT/ws_$s.ncu-rep --page details > $OUT/details_$s.txt 2>&1
  ncu -i $OUT/ws_$s.ncu-rep --page source --csv --print-source sass > $OUT/sass_$s.csv 2>&1
  ls -la $OUT
done
