# session 56, call 1 (from the repository root): the FP8 grouped GEMM's time against the bytes
# its tiles read from L2, an L2-resident read ceiling, then Nsight Compute on W13 EP8 M=16384
# (256- and 128-wide tiles)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
R=docs/results/fp8_grouped_l2_h200_2026-11-30
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call1_gpu.txt
date -u | tee -a $OUT/call1_gpu.txt
timeout 200 python3 $R/l2_probe.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call1_probe.txt
for t in 256:1 128:4; do
  w=${t%%:*}; skip=${t##*:}
  timeout 150 ncu --clock-control none -k regex:_fp8_grouped_ws_kernel --launch-skip $skip \
    --launch-count 1 --set full --import-source no -f -o $OUT/ws_$w \
    python3 $R/l2_probe.py 3 > $OUT/ncu_$w.log 2>&1
  echo ncu $w rc=$?; tail -1 $OUT/ncu_$w.log
  ncu -i $OUT/ws_$w.ncu-rep --page details > $OUT/call1_details_$w.txt 2>&1
  ncu -i $OUT/ws_$w.ncu-rep --page raw > $OUT/call1_raw_$w.txt 2>&1
  grep -E "Duration|Throughput|L2 Hit|Registers Per|Achieved Occupancy" $OUT/call1_details_$w.txt | head -20
  grep -E "lts__t_bytes.sum.per_second|lts__t_sectors_srcunit_tex_op_read.sum |lts__throughput.avg.pct|gmma|l1tex__m_xbar2l1tex_read_bytes.sum.per_second|sm__cycles_elapsed.avg.per_second" $OUT/call1_raw_$w.txt | head -20
done
rm -f $OUT/*.ncu-rep
