# Nsight Compute of the W4A16 kernel in the EP8 DP-attention cells (run from the repo root).
P=docs/results/dp_compute_h100_2026-11-23/probes
nvidia-smi -L; ncu --version | tail -1
for c in "W13 64" "W13 128" "W13 256" "W2 64" "W2 128" "W2 256"; do
  t=${c// /_}
  python3 $P/graph_case.py $c
  ncu --clock-control none -k regex:"_w4a16_(gluon|gemm)_kernel" --launch-count 3 --set full \
      -o $OUT/ncu_$t python3 $P/graph_case.py $c > $OUT/ncu_$t.log 2>&1 || tail -5 $OUT/ncu_$t.log
  ncu --import $OUT/ncu_$t.ncu-rep --page details > $OUT/details_$t.txt
  ncu --import $OUT/ncu_$t.ncu-rep --page raw --csv > $OUT/raw_$t.csv
  python3 $P/summarize_raw.py $OUT/raw_$t.csv | tee -a $OUT/summary.txt
  rm -f $OUT/ncu_$t.ncu-rep $OUT/raw_$t.csv $OUT/ncu_$t.log
  grep -E "^    (Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|Achieved Occupancy|Registers Per Thread|Grid Size|Block Size)" $OUT/details_$t.txt
done
