# session 50, call 6 (from the repository root, .whl carried): the SwiGLU kernels' GPU tests
# after numerics.swiglu_tile; kernel profiles of 2 exact Qwen3-30B-A3B layers (8 x 1024, sdpa)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_swiglu_training.py \
  tests/kernels/test_fp8_swiglu.py tests/kernels/test_swiglu_experts.py 2>&1 | tail -2 \
  | tee $OUT/call6_pytest.txt
timeout 300 python3 docs/results/swiglu_h200_2026-11-29/layer_profile.py none+grouped w4a16 \
  fp8-block 2>&1 | grep -v "Warning\|warn" | tee $OUT/call6_profile.txt
