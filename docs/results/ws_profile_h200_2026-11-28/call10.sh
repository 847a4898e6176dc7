# session 41, call 10 (from the repository root, .whl carried): the GPU suite of kernels and
# trainer at the final routing
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 python3 -m pytest -q -W ignore -p no:cacheprovider -n 12 tests/kernels tests/trainer \
  > $OUT/suite.txt 2>&1; echo rc=$?; tail -4 $OUT/suite.txt
