# session 54, call 4 (call 3's tree): the activation quantizer's blocks a program by row count,
# the FP8 SwiGLU's program order
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
R=docs/results/fp8_act_quant_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call4_gpu.txt
timeout 300 python3 $R/rule_sweep.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call4_rule_sweep.txt
