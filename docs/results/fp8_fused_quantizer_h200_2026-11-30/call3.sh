# session 63, this folder's call 3 (.whl carried): FP8 dense calls at 4096-16384 tokens with
# the activation quantizer overlapped with cuBLAS's GEMM over row chunks (overlap_probe.py)
D=docs/results/fp8_fused_quantizer_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 400 python3 $D/overlap_probe.py 5 2>&1 | tee $OUT/call3_overlap.txt
