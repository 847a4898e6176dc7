export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | grep -v WARN
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_w4a16_gluon_dense.py tests/megatron/test_keep_operand.py tests/kernels/test_w4a16_gemm.py -W ignore 2>&1 | tail -6 | tee $OUT/tests.txt
cp docs/benchmarks.md /tmp/bench.md
timeout 250 python3 -m qarl_kernels.bench --only dense --doc /tmp/bench.md 2>&1 | grep -v "Warning\|warn(" | tail -70 > $OUT/bench_dense.txt
tail -3 $OUT/bench_dense.txt
cp /tmp/bench.md $OUT/benchmarks.md
