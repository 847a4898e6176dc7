# Call 1 (nvidia-h100-x1): the full benchmark run (every part, each kernel checked before it is
# timed) on an H100 at this tree's kernels, into a copy of docs/benchmarks.md. Issue 9 states its
# targets for the H100; the last H100 run of the whole package was e69dd1f (session 35).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
/usr/bin/time -f "bench %e s" timeout 500 python -m qarl_kernels.bench --doc $OUT/benchmarks.md \
  > $OUT/call1_bench.txt 2>&1; echo "bench rc=$?"; grep -c MISMATCH $OUT/call1_bench.txt
grep -i "Checked\| s$" $OUT/call1_bench.txt | tail -3
