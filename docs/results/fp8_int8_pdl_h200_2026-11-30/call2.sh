# session 59, this folder's call 2 (the machine still warm): PDL only up to pdl.PDL_MAX_ROWS
# rows; the same A/B, seven rounds at 1, 8 and 64 tokens, the EP8 experts block at 8
D=docs/results/fp8_int8_pdl_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
timeout 240 python3 $D/pdl_ab.py 7 1 8 64 2>&1 | tee $OUT/call2_ab.txt
