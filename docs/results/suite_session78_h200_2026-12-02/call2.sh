# Call 2 (nvidia-h200): session 78's GPU suite, part 2: everything but tests/trainer and
# tests/rollout_sglang, at the commit after the kernels' dispatch review (its
# tests/kernels/test_dispatch_rules.py and extended rule tests: on Hopper the WS rules run
# with the real capability, on the CPU faked).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 570 python -m pytest tests/kernels tests/quant tests/megatron tests/checkpoint tests/rl \
  -q -rf -n 16 --dist worksteal -p no:cacheprovider 2>&1 | tail -25 | tee $OUT/call2_suite.txt; date -u
