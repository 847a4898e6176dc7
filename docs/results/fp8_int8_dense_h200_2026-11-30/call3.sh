# session 60, this folder's call 3 (.whl carried; .whl/kernels_main = kernels/ at 7c4025f, the
# route before this round): the kernels' tests on the GPU, then the FP8 and INT8 dense ops
# (quantizer included) now against before with ../fp8_int8_pdl_h200_2026-11-30/pdl_ab.py,
# seven rounds, 16-512 tokens (16, 32 and 512: controls; the EP8 experts block at 16: control)
D=docs/results/fp8_int8_dense_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 220 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels 2>&1 | tail -4 | tee $OUT/call3_pytest.txt
timeout 330 python3 docs/results/fp8_int8_pdl_h200_2026-11-30/pdl_ab.py 7 16 32 64 96 128 200 256 512 2>&1 | tee $OUT/call3_ab.txt
