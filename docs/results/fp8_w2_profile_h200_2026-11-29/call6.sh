# session 53, call 6 (from the repository root, at the tree of INT8's call 5): the FP8 weight
# quantizer on W2 in three layouts, timed, then Nsight Compute on one launch of each
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
R=docs/results/fp8_w2_profile_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/call6_gpu.txt
timeout 100 python3 $R/fp8_w2_layouts.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call6_layouts.txt
# with 3 launches a layout: the checks' 4 launches, then each layout's three (its second profiled)
i=0
for s in stacked separate buffer; do
  timeout 150 ncu --clock-control none -k regex:_fp8_weight_kernel --launch-skip $((5 + 3 * i)) \
    --launch-count 1 --set full --import-source no -f -o $OUT/fp8w2_$s \
    python3 $R/fp8_w2_layouts.py 3 > $OUT/ncu_$s.log 2>&1
  echo ncu $s rc=$?; tail -1 $OUT/ncu_$s.log
  ncu -i $OUT/fp8w2_$s.ncu-rep --page details > $OUT/details_$s.txt 2>&1
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Registers Per|Mem Busy|Max Bandwidth|dram__" $OUT/details_$s.txt | head -20
  i=$((i + 1))
done
