# Call 1 (nvidia-h200): the bench's CPU tests, then five --only parts with the rate columns
# (GB/s, %BW, TFLOP/s, % bf16 peak) and graph timings as medians of 10 batches, into a copy of
# docs/benchmarks.md.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log --oneline -1 2>/dev/null
python -m pytest -q tests/kernels/test_bench_rates.py tests/kernels/test_bench_cli.py -p no:cacheprovider 2>&1 | tail -1
cp docs/benchmarks.md $OUT/benchmarks.md
for part in w4a16 dense quantize fp8 int8; do
  /usr/bin/time -f "$part %e s" timeout 200 python -m qarl_kernels.bench --only $part --doc $OUT/benchmarks.md \
    > $OUT/call1_$part.txt 2>&1; echo "$part rc=$?"; grep -i "Checked\|MISMATCH\|Error\| s$" $OUT/call1_$part.txt | tail -4
done
