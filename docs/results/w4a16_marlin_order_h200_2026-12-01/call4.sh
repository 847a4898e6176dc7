# Session 70, call 4: the test suite on the GPU at the commit that took W4A16's fc2 with probs
# back to the WS kernel past the dequantize threshold; tests/kernels ran whole in calls 2-3
# (the same kernels), so only its two files that this commit touches run here.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
skip=$(ls tests/kernels/test_*.py | grep -v -e test_w4a16_grouped_ws.py -e test_router_prob_epilogue.py \
  | sed 's/^/--ignore=/')
timeout 530 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang $skip \
  -p no:cacheprovider > $OUT/pytest.txt 2>&1
tail -15 $OUT/pytest.txt
