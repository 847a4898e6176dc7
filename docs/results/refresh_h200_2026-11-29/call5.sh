# session 48, call 5 (from the repository root, .whl carried): the Megatron-layer and trainer
# tests at this session's tree (the permutation by the known count, the joint refresh)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 400 python3 -m pytest -q -n 16 -p no:cacheprovider tests/megatron tests/trainer 2>&1 \
  | tail -3 | tee $OUT/call5_pytest.txt
