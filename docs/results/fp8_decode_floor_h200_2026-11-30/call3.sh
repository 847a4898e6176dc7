# session 61, this folder's call 3 (.whl carried): `python -m qarl_kernels.tune --only dense`
# on a GPU for the first time (session 60 wrote it after its device time ran out)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 500 python3 -m qarl_kernels.tune --only dense --workers 14 2>&1 | tee $OUT/call3_tune.txt | grep -v "^skipped"
echo "tune rc=${PIPESTATUS[0]}"
