# Call 1 (nvidia-h200): sgl-kernel SM90's FP8 activation arithmetic (fast math) on the GPU
# against the learner's spec and a reciprocal-then-multiply formula (probe.py says which).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
ls /usr/local/cuda/bin 2>&1 | head -30; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 300 python3 docs/results/sglang_fp8_fast_math_h200_2026-12-01/probe.py 2>&1 \
  | grep -v -i warn | tee $OUT/call1_probe.txt
