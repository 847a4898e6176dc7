# session 54, call 9 (the round's kernels): the FP8 SwiGLU at 32768 x 768, round 49's against
# this tree's and a variant loading the prob once a row; Nsight Compute on the first two
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_old
R=docs/results/fp8_act_quant_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call9_gpu.txt
timeout 120 python3 $R/swiglu_probe.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call9_swiglu_probe.txt
for tree in old new; do
  timeout 120 ncu --clock-control none -k regex:_fp8_swiglu_kernel --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    python3 $R/swiglu_probe.py --ncu $tree 2>&1 | grep -v "Warning\|warn\|==PROF==" > $OUT/call9_ncu_$tree.txt
  grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Block Size|Grid Size" $OUT/call9_ncu_$tree.txt | sed "s/^/$tree: /"
done
