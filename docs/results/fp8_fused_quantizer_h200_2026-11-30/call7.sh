# session 63, call 7 (from the repository root, .whl carried): tests/kernels on the GPU after
# the review's mend (6d033d0: split_k.k_slice empties a tile's slice without rows)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 170 python3 -m pytest tests/kernels -q -n 16 --dist worksteal > $OUT/call7_pytest.txt 2>&1
echo "pytest rc=$?"; tail -2 $OUT/call7_pytest.txt
