# Call 4 (nvidia-h100-x1): the tiny example as committed (`bash examples/tiny/train.sh gpu`,
# 1500 warm-start steps, 60 QaRL-TBPO steps with W4A16 rollouts) beside the kernel, quant and
# Megatron-layer tests on the H100's compiled kernels (the last H100 run of them: 2026-11-24).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
( time timeout 400 bash examples/tiny/train.sh gpu --no-progress-bar ) > $OUT/call4_tiny_gpu.txt 2>&1 &
timeout 480 python -m pytest tests/kernels tests/quant tests/megatron -q -rf -n 12 --dist worksteal \
  -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/call4_tests.txt
wait; grep "reward (greedy\|^real\|warm start only" $OUT/call4_tiny_gpu.txt; date -u
