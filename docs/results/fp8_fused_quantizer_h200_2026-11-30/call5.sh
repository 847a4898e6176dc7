# session 63, call 5 (from the repository root, .whl carried): the W4A16 decode section at
# this tree on the H200 (its section in docs/benchmarks.md is the H100's at ada0e99, session 39;
# 28 commits have touched the W4A16 kernels since), into a copy of benchmarks.md
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp docs/benchmarks.md $OUT/benchmarks.md
start=$(date +%s)
timeout 500 python3 -m qarl_kernels.bench --decode-only --doc $OUT/benchmarks.md > $OUT/call5_decode.txt 2>&1
echo "bench rc=$? in $(( $(date +%s) - start )) s"; grep -E "MISMATCH|cases passed|Error" $OUT/call5_decode.txt | head
