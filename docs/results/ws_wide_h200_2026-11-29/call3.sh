# session 43, call 3 (from the repository root, .whl carried): host time with the final key
# (gluon_launch.py, one map over the arguments); `bench --only w4a16` into benchmarks.md
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_wide_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 100 python3 $d/launch.py 2>&1 | tee $OUT/call3_launch.txt
timeout 60 python3 -m pytest -q -W ignore -p no:cacheprovider tests/kernels/test_gluon_launch.py 2>&1 | tail -2 | tee $OUT/call3_pytest.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python3 -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md > $OUT/call3_bench.txt 2>&1
echo bench rc=$?; grep -A24 "grad_input (backward" $OUT/call3_bench.txt | tail -21; tail -2 $OUT/call3_bench.txt
