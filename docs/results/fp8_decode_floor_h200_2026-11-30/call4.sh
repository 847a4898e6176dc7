# session 61, this folder's call 4 (.whl carried): confirm.py 7 (call 3's cells with a best
# under 0.94x the rule's time, seven interleaved rounds); the kernels' tests
D=docs/results/fp8_decode_floor_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 $D/confirm.py 7 2>&1 | tee $OUT/call4_confirm.txt
