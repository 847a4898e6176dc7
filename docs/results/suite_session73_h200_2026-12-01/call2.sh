# Call 2 (nvidia-h200): the GPU suite again after the fp32 router probs of FP8/INT8 experts
# (layers/router_probs.py) and the SGLang launcher fixes, at the commit named in README.md.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 560 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  -p no:cacheprovider 2>&1 | tail -25 | tee $OUT/call2_suite.txt; date -u
