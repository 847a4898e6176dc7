# Session 71, call 2: the Gluon and WS kernel test files again after call 1's stale regex was
# fixed, then the experts block (fc2 with probs past 2047 rows an expert takes the WS kernel with
# Marlin's rounding in its epilogue since 3a0c310: session 70 had no device time to time it).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 240 python -m pytest tests/kernels/test_w4a16_gluon.py tests/kernels/test_w4a16_grouped_ws.py \
  tests/kernels/test_router_prob_epilogue.py -q -rf -n 16 -p no:cacheprovider > $OUT/kernel_tests.txt 2>&1
tail -3 $OUT/kernel_tests.txt
timeout 240 python -m qarl_kernels.bench --only experts --doc $OUT/experts.md > $OUT/experts.txt 2>&1
grep -E "^\| (E128|EP8)|MISMATCH|cases passed" $OUT/experts.md; tail -2 $OUT/experts.txt
