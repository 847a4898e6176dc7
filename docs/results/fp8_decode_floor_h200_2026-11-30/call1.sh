# session 61, this folder's call 1 (.whl carried; .whl/kernels_main = kernels/ at 7c4025f):
# session 60's next_ab.sh (INT8 257-512 token rule, op-level A/B against 7c4025f, five rounds);
# dense_floor.py (the FP8/INT8 dense GEMMs against the stream floor of their weight bytes); ncu of
# one call each at o_proj 64 tokens; the dense section of the benchmark into a copy of
# docs/benchmarks.md (copied back)
D=docs/results/fp8_decode_floor_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 150 python3 docs/results/fp8_int8_pdl_h200_2026-11-30/pdl_ab.py 5 256 320 384 512 768 2>&1 | tee $OUT/call1_ab.txt | grep -v "^FP8"
timeout 120 python3 $D/dense_floor.py 5 2>&1 | tee $OUT/call1_floor.txt
timeout 90 ncu --clock-control none -k regex:"_stream_kernel|_fp8_grouped_kernel|_int8_gemm_kernel" --launch-skip 6 --launch-count 3 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats python3 $D/ncu_target.py o_proj 64 > $OUT/call1_ncu.txt 2>&1
echo "ncu rc=$?"; grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size" $OUT/call1_ncu.txt | head -40
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python3 -m qarl_kernels.bench --only dense --doc $OUT/benchmarks.md > $OUT/call1_bench.txt 2>&1
echo "bench rc=$?"; grep -E "MISMATCH|cases passed" $OUT/call1_bench.txt
