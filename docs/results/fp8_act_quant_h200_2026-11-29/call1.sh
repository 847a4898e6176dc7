# session 54, call 1: the FP8 activation quantizer's program shape swept at training sizes
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
R=docs/results/fp8_act_quant_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call1_gpu.txt
timeout 500 python3 $R/act_sweep.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call1_act_sweep.txt
