export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 150 python3 -m pytest -q -W ignore -x -p no:cacheprovider tests/kernels/test_w4a16_gluon.py -k "split_fused or fused_swiglu_is" tests/kernels/test_w4a16_gluon_dense.py 2>&1 | tail -5
timeout 420 python3 .gpu/split39.py 3 2>&1 | grep -v Warning | tee $OUT/split39.txt
