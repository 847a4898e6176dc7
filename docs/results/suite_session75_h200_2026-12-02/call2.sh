# Call 2 (nvidia-h200): the test files session 75 changed after call 1, on the GPU (their CUDA
# variants: the expert tiles' decode case, the nonfinite counter on 3 rows, the sampler's
# top-p cases, the wiring tests, the warm-start flags).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 400 python -m pytest -q -rfE -n 8 -p no:cacheprovider tests/kernels/test_expert_tiles.py \
  tests/kernels/test_nonfinite_count.py tests/trainer/test_sampling.py \
  tests/trainer/test_rl_step_wiring.py tests/megatron/test_fused_swiglu.py \
  tests/trainer/test_end_to_end.py 2>&1 | tail -4 | tee $OUT/call2_pytest.txt
