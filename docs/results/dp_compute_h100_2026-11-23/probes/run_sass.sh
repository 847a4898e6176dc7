# Where the warps of the two-stage cells stall, per SASS instruction (run from the repo root).
P=docs/results/dp_compute_h100_2026-11-23/probes
for c in "W13 128" "W2 128" "W13 256"; do
  t=${c// /_}
  ncu --clock-control none -k regex:"_w4a16_(gluon|gemm)_kernel" --launch-skip 2 --launch-count 1 \
      --section SourceCounters --section WarpStateStats --import-source no \
      -o $OUT/sass_$t python3 $P/graph_case.py $c > $OUT/sass_$t.log 2>&1 || tail -5 $OUT/sass_$t.log
  ncu --import $OUT/sass_$t.ncu-rep --page source --csv --print-source sass > $OUT/sass_$t.csv
  python3 $P/top_stalls.py $OUT/sass_$t.csv 30 | tee -a $OUT/sass_top.txt
  rm -f $OUT/sass_$t.ncu-rep $OUT/sass_$t.log
  gzip -f $OUT/sass_$t.csv
done
