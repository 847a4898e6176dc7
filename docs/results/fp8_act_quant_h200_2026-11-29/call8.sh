# session 54, call 8 (call 5's tree): call 7's one failure, test_rewards (math_verify is not in
# the GPU image), with math-verify 0.9.0, latex2sympy2_extended 1.11.0 and antlr4 4.13.2 wheels
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/trainer/test_data_and_rewards.py 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -12 | tee $OUT/call8_pytest.txt
