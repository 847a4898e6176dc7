# session 45, call 9, written and not run (no device time left): the FP8 activation
# quantizer's rows a program x warps with the e4m3 rounding in hardware (quant_tiles.py)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels; date -u
timeout 110 python3 docs/results/ab_h200_2026-11-29/quant_tiles.py 2>&1 | tee $OUT/call9_tiles.txt
