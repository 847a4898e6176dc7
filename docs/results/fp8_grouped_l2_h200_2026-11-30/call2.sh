# session 56, call 2 (from the repository root): where the FP8 grouped GEMM's warps stall
# (Nsight Compute's SASS source page, W13 EP8 M=16384, 256-wide tiles), and whether a long run's
# clock moves its ratio to bf16 (nvidia-smi sampling the SM clock and power meanwhile)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
R=docs/results/fp8_grouped_l2_h200_2026-11-30
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv -lms 200 > $OUT/call2_smi.csv &
smi=$!
timeout 200 python3 $R/clock_probe.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_clock.txt
kill $smi
awk -F', ' 'NR > 1 {print $1}' $OUT/call2_smi.csv | sort | uniq -c | sort -k2 -n | tail -12
timeout 150 ncu --clock-control none -k regex:_fp8_grouped_ws_kernel --launch-skip 1 \
  --launch-count 1 --set full --import-source no -f -o $OUT/ws_256 \
  python3 $R/l2_probe.py 3 > $OUT/ncu_256.log 2>&1
echo ncu rc=$?
ncu -i $OUT/ws_256.ncu-rep --page source --csv --print-source sass > $OUT/call2_sass_256.csv 2>&1
python3 $R/sass_hot.py $OUT/call2_sass_256.csv | tee $OUT/call2_sass_hot.txt
rm -f $OUT/*.ncu-rep
