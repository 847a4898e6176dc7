export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import sys; sys.path[:0]=['/tmp/site']; import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 240 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_gluon.py tests/kernels/test_w4a16_swiglu.py tests/kernels/test_swiglu_experts.py tests/kernels/test_split_k.py tests/kernels/test_w4a16_gluon_dense.py tests/kernels/test_routed_rows.py tests/trainer/test_embedded_engine.py > $OUT/tests.txt 2>&1; echo tests rc=$?; tail -2 $OUT/tests.txt
cp docs/benchmarks.md /tmp/bench.md
timeout 300 python3 -m qarl_kernels.bench --decode-only --doc /tmp/bench.md > $OUT/decode.txt 2>&1; echo bench rc=$?
cp /tmp/bench.md $OUT/bench.md; grep "Checked\|MISMATCH" $OUT/decode.txt
