# session 50, call 1 (from the repository root, .whl carried): the training SwiGLU kernels'
# GPU tests, their tile sweep against torch's composite, and the 200M model's step A/B
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log -1 --format=%h 2>/dev/null
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_swiglu_training.py \
  tests/kernels/test_register.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_int8.py \
  tests/kernels/test_w4a16_swiglu.py tests/megatron/test_fused_swiglu.py 2>&1 | tail -3 \
  | tee $OUT/call1_pytest.txt
timeout 150 python3 docs/results/swiglu_h200_2026-11-29/swiglu_sweep.py 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call1_sweep.txt
timeout 270 python3 docs/results/swiglu_h200_2026-11-29/swiglu_ab.py 5 200m 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call1_ab_200m.txt
