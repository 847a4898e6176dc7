# Call 4 (nvidia-h200): the example as committed (4ad5e24: 1500 warm-start steps), seed 1234,
# `bash examples/tiny/train.sh gpu` whole; beside it the kernel test files the Triton-bodies
# review changed (TESTS, set below), on the GPU's compiled kernels.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
( time timeout 400 bash examples/tiny/train.sh gpu --no-progress-bar ) > $OUT/call4_tiny_gpu.txt 2>&1 &
TESTS="tests/kernels/test_bf16_quantize.py tests/kernels/test_int8.py tests/kernels/test_routed_sum.py tests/kernels/test_token_logprobs_kernel.py tests/kernels/test_w4a16_gemv.py tests/kernels/test_w4a16_quantize.py"
[ -n "$TESTS" ] && timeout 400 python -m pytest $TESTS -q -rf -n 8 -p no:cacheprovider 2>&1 | tail -4 \
  | tee $OUT/call4_kernel_tests.txt
wait; grep "reward (greedy\|^real\|warm start only" $OUT/call4_tiny_gpu.txt; date -u
