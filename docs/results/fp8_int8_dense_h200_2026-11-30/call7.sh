# session 60, this folder's call 7 (.whl carried): dense_sweep.py past split_k.DECODE_MAX_ROWS,
# three rounds at 384 and 512 tokens (the route there: cuBLAS for FP8 on Hopper, 128 x 128 tiles
# for INT8)
D=docs/results/fp8_int8_dense_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 $D/dense_sweep.py 3 384 512 2>&1 | tee $OUT/call7_sweep.txt | grep -v " sweep "
