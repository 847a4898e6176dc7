# Call 2 (nvidia-h200): the benchmark package end to end: the full run (every part) and the
# decode section, each into a copy of docs/benchmarks.md (the committed tables stay the H100's
# where they are).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp docs/benchmarks.md $OUT/benchmarks.md
start=$(date +%s)
timeout 400 python -m qarl_kernels.bench --doc $OUT/benchmarks.md > $OUT/call2_bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - start )) s"; grep -c MISMATCH $OUT/call2_bench.txt; tail -1 $OUT/call2_bench.txt
start=$(date +%s)
timeout 170 python -m qarl_kernels.bench --decode-only --doc $OUT/benchmarks.md > $OUT/call2_decode.txt 2>&1
echo "decode rc=$? $(( $(date +%s) - start )) s"; grep -c MISMATCH $OUT/call2_decode.txt; tail -1 $OUT/call2_decode.txt
