# session 56, call 6 (from the repository root, .whl carried): the GPU tests of the kernels and
# the Megatron layers at the round's tree (xdist's default distribution, 16 workers)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/call6_gpu.txt
timeout 330 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels > $OUT/call6_pytest_kernels.txt 2>&1
echo kernels rc=$?; tail -2 $OUT/call6_pytest_kernels.txt
timeout 230 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/megatron > $OUT/call6_pytest_megatron.txt 2>&1
echo megatron rc=$?; tail -2 $OUT/call6_pytest_megatron.txt
