# session 62, this folder's call 7 (.whl carried): the experts section of the benchmark (its
# INT8 column runs the SwiGLU quantizer of call 6) into a copy of docs/benchmarks.md
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 240 python3 -m qarl_kernels.bench --only experts --doc $OUT/benchmarks.md > $OUT/call7_experts.txt 2>&1
echo "bench rc=$?"; grep "^| \|passed\|FAIL\|MISMATCH" $OUT/call7_experts.txt | tail -20
