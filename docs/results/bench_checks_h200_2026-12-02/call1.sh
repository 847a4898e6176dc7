# Call 1 (nvidia-h200): the W4A16 decode tables with the weight copies counted from the touched
# experts' bytes (bench.cases.W4A16Copies), into a copy of docs/benchmarks.md; the bench's CPU
# tests on the GPU machine.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 60 python -m pytest -q -p no:cacheprovider tests/kernels/test_bench_weight_copies.py \
  tests/kernels/test_bench_cli.py 2>&1 | tail -2 | tee $OUT/call1_tests.txt
cp docs/benchmarks.md $OUT/benchmarks.md
/usr/bin/time -f "%e s" timeout 450 python -m qarl_kernels.bench --decode-only --doc $OUT/benchmarks.md \
  > $OUT/call1_decode.txt 2>&1; echo "bench rc=$?"; grep -i "Checked\|MISMATCH\| s$" $OUT/call1_decode.txt | tail -5
