# Call 1 (nvidia-h200): the learner's FP8/INT8 activation quantizers against SGLang's own
# quantizers' arithmetic (probe.py says which), on a GPU.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 docs/results/sglang_activation_rounding_h200_2026-12-01/probe.py 2>&1 \
  | grep -v -i warn | tee $OUT/call1_probe.txt
