# The decode-batch W2 cells (M tokens top-8 over 128 experts, one EP8 rank's 16): Nsight
# Compute summary and per-SASS stalls of one graph replay (run from the repo root).
P=docs/results/dp_compute_h100_2026-11-23/probes
export BATCH=1
for m in 64 256; do
  python3 $P/graph_case.py W2 $m
  ncu --clock-control none -k regex:"_w4a16_(gluon|gemm)_kernel" --launch-skip 2 --launch-count 1 \
      --set full -o $OUT/batch_W2_$m python3 $P/graph_case.py W2 $m > /dev/null 2>&1
  ncu --import $OUT/batch_W2_$m.ncu-rep --page raw --csv > $OUT/raw.csv
  python3 $P/summarize_raw.py $OUT/raw.csv
  ncu --import $OUT/batch_W2_$m.ncu-rep --page source --csv --print-source sass > $OUT/sass.csv
  python3 $P/top_stalls.py $OUT/sass.csv 12
  ncu --import $OUT/batch_W2_$m.ncu-rep --page details > $OUT/details_batch_W2_$m.txt
  rm -f $OUT/batch_W2_$m.ncu-rep $OUT/raw.csv $OUT/sass.csv
done
