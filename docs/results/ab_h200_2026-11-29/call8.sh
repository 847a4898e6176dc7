# session 45, call 8 (from the repository root, .whl carried), on call 7's machine and tree:
# the FP8 benchmark with the quantizers' e4m3 rounding in hardware (its section of
# docs/benchmarks.md)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 170 python3 -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md > $OUT/call8_bench.txt 2>&1
echo bench rc=$?
