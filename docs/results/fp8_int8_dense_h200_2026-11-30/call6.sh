# session 60, this folder's call 6 (.whl carried): pdl_dense_probe.py, five rounds at 16, 64, 128 and 256 tokens
D=docs/results/fp8_int8_dense_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 300 python3 $D/pdl_dense_probe.py 5 16 64 128 256 2>&1 | tee $OUT/call6_probe.txt
