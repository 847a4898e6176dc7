# NOT RUN in session 60 (its device time ran out before a machine could start): the A/B that
# should follow call 7, for the next GPU session. .whl carried; .whl/kernels_main = kernels/ at
# 7c4025f. INT8
# dense calls of 257-512 tokens on 64 x 64 tiles where they fit three waves
# (int8_gemm.dense_tiles); the ops before and now with ../fp8_int8_pdl_h200_2026-11-30/pdl_ab.py,
# five rounds at 256 (control: round 56's first rule), 320, 384, 512 and 768 (control) tokens;
# FP8 unchanged there (control)
D=docs/results/fp8_int8_dense_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 150 python3 docs/results/fp8_int8_pdl_h200_2026-11-30/pdl_ab.py 5 256 320 384 512 768 2>&1 | tee $OUT/next_ab.txt | grep -v "^FP8"
