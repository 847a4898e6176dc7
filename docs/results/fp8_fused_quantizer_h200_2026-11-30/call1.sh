# session 63, this folder's call 1 (.whl carried; .whl/kernels_main = kernels/ at 6870640):
# the FP8 dense kernel quantizing its own K blocks of x (fp8_gemm.FUSED_QUANTIZER_ROWS = 256,
# every Triton-kernel call) against the quantizer + GEMM of 6870640: the FP8 tests on the GPU,
# then round 55's A/B (five rounds, 1-256 tokens; INT8 and the experts block as controls)
D=docs/results/fp8_fused_quantizer_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 150 python3 -m pytest -q -n 8 tests/kernels/test_fp8.py tests/kernels/test_split_k.py 2>&1 | tail -4 | tee $OUT/call1_pytest.txt
timeout 380 python3 docs/results/fp8_int8_pdl_h200_2026-11-30/pdl_ab.py 5 1 8 16 32 64 128 256 2>&1 | tee $OUT/call1_ab.txt
