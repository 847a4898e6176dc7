# session 59, this folder's call 5 (from the repository root, .whl carried): the dense section
# of the benchmark (into a copy of docs/benchmarks.md, copied back), then the GPU suite but the
# SGLang bridge's, with work stealing
D=docs/results/w4a16_gemv_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 150 python3 -m qarl_kernels.bench --only dense --doc $OUT/benchmarks.md > $OUT/call5_bench.txt 2>&1
echo "bench rc=$?"; grep -E "^\| (qkv|o_proj)[^|]*\| 1 \||MISMATCH|cases passed" $OUT/call5_bench.txt
start=$(date +%s)
timeout 400 python3 -m pytest -v -W ignore -p no:cacheprovider -n 16 --dist worksteal tests \
  --ignore=tests/rollout_sglang > $OUT/call5_pytest.txt 2>&1
echo "pytest rc=$? in $(( $(date +%s) - start )) s"
grep -E "^(FAILED|ERROR)" $OUT/call5_pytest.txt | head; tail -2 $OUT/call5_pytest.txt
