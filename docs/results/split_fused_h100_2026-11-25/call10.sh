export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import sys; sys.path[:0]=['/tmp/site']; import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 4 tests/kernels/test_w4a16_gluon.py -k "split or graphs" 2>&1 | tail -3
