export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/.gpu/old39 PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1 2>/dev/null; date -u
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_gluon.py tests/kernels/test_w4a16_gluon_dense.py tests/kernels/test_w4a16_swiglu.py tests/kernels/test_split_k.py 2>&1 | tail -4
cp docs/benchmarks.md /tmp/bench.md
timeout 380 python3 -m qarl_kernels.bench --decode-only --compare oldk.w4a16_gemm --doc /tmp/bench.md > $OUT/decode.txt 2>&1; echo rc=$?
cp /tmp/bench.md $OUT/bench.md
grep -A3 "Checked\|MISMATCH" $OUT/decode.txt | head; tail -3 $OUT/decode.txt
