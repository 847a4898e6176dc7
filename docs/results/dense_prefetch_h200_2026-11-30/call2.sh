# session 62, this folder's call 2 (.whl carried: kernels_main = kernels/ at 273ccb4;
# kernels_after and kernels_first = kernels/ at f6248cf with the variants variants_ab.py names)
D=docs/results/dense_prefetch_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
ln -sfn $PWD/.whl/kernels_after/kernels /tmp/pp/qarl_kernels_after && ln -sfn $PWD/.whl/kernels_first/kernels /tmp/pp/qarl_kernels_first
timeout 400 python3 $D/variants_ab.py 7 1 8 2>&1 | tee $OUT/call2_ab.txt
