# Call 1 (nvidia-h200): the kernel and quant tests after session 74's changes (quant.ops
# refusing weights and rows of another layout before any kernel runs; W4A16 serving shapes).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log --oneline -1
timeout 570 python -m pytest tests/kernels tests/quant -q -rf -n 16 --dist worksteal \
  -p no:cacheprovider 2>&1 | tail -25 | tee $OUT/call1_suite.txt; date -u
