# session 61, this folder's call 5 (.whl carried): int8_one_pass.py 5 (the INT8 activation
# quantizer in one pass up to 4096 / 8192 inputs against two past 2048, o_proj, 1-4096 tokens)
D=docs/results/fp8_decode_floor_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 $D/int8_one_pass.py 5 2>&1 | tee $OUT/call5_one_pass.txt
