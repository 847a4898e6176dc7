# Call 6 (nvidia-h200): SGLang's SwiGLU arithmetic (fast math) against the learner's
# (silu_probe.py says which). The first try (call6_first_try.txt) loaded the module before
# any CUDA context existed.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/docs/results/sglang_fp8_fast_math_h200_2026-12-01 PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 120 python3 docs/results/sglang_fp8_fast_math_h200_2026-12-01/silu_probe.py 2>&1 \
  | grep -v -i warn | tee $OUT/call6_silu.txt
