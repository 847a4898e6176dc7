# session 60, this folder's call 2 (the machine still warm): int8_kstep.py, three rounds
D=docs/results/fp8_int8_dense_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 500 python3 $D/int8_kstep.py 3 2>&1 | tee $OUT/call2_kstep.txt
