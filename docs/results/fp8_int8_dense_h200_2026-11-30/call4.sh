# session 60, this folder's call 4 (.whl carried; .whl/kernels_main = kernels/ at 7c4025f): K
# split only while each slice walks block_n / 4 K steps (call 3: INT8 o_proj TP2 at 200-256
# tokens 0.91x before's speed with a second slice); the kernels' tests, the A/B again at
# 64-256 tokens (seven rounds), then the dense section of the benchmark into a copy of
# docs/benchmarks.md (copied back)
D=docs/results/fp8_int8_dense_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 150 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels 2>&1 | tail -2 | tee $OUT/call4_pytest.txt
timeout 150 python3 docs/results/fp8_int8_pdl_h200_2026-11-30/pdl_ab.py 7 64 96 128 200 256 2>&1 | tee $OUT/call4_ab.txt | grep -v "experts block"
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 220 python3 -m qarl_kernels.bench --only dense --doc $OUT/benchmarks.md > $OUT/call4_bench.txt 2>&1
echo "bench rc=$?"; grep -E "MISMATCH|cases passed" $OUT/call4_bench.txt
