# Session 70, call 3: the Gluon prob epilogue without the trip through shared memory (call 2's
# form cost EP8-beside-TP M=256 26.4 -> 29.9 us): the accumulator's first read is an fp32 add of
# the prob's zero. The kernel and quant tests, then the experts block.
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/pp:$PWD:/tmp/site
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 python -m pytest tests/kernels tests/quant -q -rf -n 16 -p no:cacheprovider \
  > $OUT/kernel_tests.txt 2>&1; tail -4 $OUT/kernel_tests.txt
timeout 110 python -m qarl_kernels.bench --only experts --doc $OUT/experts.md > $OUT/experts.txt 2>&1
grep -E "^\| (E128|EP8)|MISMATCH|cases passed" $OUT/experts.md; tail -2 $OUT/experts.txt
