# Call 3 (nvidia-h200): call 2 again after moving the Gluon kernels' row cap out of the expert
# tables' scans (call 2: EP8 decode 3-5% slower than 5cc1bea's kernels) into tile_of, one min a
# tile lookup: the kernels' tests, then the W4A16 decode section with 5cc1bea's kernels beside
# (.whl/kernels_main = `git archive 5cc1bea kernels`, imported as qarl_kernels_main).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels \
  && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
timeout 240 python -m pytest -q -rf -n 16 --dist worksteal tests/kernels > $OUT/call3_pytest.txt 2>&1
echo "kernel tests rc=$? $(( $(date +%s) - start )) s"; tail -2 $OUT/call3_pytest.txt
grep -E "^FAILED|^ERROR" $OUT/call3_pytest.txt | head
cp docs/benchmarks.md $OUT/benchmarks.md
start=$(date +%s)
timeout 300 python -m qarl_kernels.bench --decode-only --compare qarl_kernels_main.w4a16_gemm \
  --doc $OUT/benchmarks.md > $OUT/call3_decode.txt 2>&1
echo "decode rc=$? $(( $(date +%s) - start )) s"; grep -c MISMATCH $OUT/call3_decode.txt
tail -1 $OUT/call3_decode.txt
