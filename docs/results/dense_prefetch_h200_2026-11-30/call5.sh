# session 62, this folder's call 5 (.whl carried): the kernels' GPU tests at the session's last
# kernel change (split_k.store_split, INT8's narrow split cap), which call 3 predates
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 300 python3 -m pytest -q -n 16 tests/kernels tests/megatron/test_build_and_train.py 2>&1 | tail -3 | tee $OUT/call5_pytest.txt
