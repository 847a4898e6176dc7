# Session 69, call 5: W4A16's prob in Marlin's form (the rounded output times the bf16 prob) in
# the Gluon and WS kernels, and the FP8 WS kernel's on exact sums: the kernel tests that touch
# the epilogues, then the experts block after the change.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 150 python -m pytest -q -rf -n 16 -p no:cacheprovider tests/kernels/test_router_prob_epilogue.py \
  tests/kernels/test_w4a16_gluon.py tests/kernels/test_w4a16_grouped_ws.py \
  tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_launch_cache.py \
  tests/kernels/test_swiglu_experts.py tests/kernels/test_w4a16_swiglu.py \
  tests/kernels/test_moe_backward.py tests/quant > $OUT/kernel_tests.txt 2>&1
tail -4 $OUT/kernel_tests.txt
timeout 100 python -m qarl_kernels.bench --only experts --doc $OUT/experts.md > $OUT/experts.txt 2>&1
grep -E "^\| (E128|EP8)" $OUT/experts.md; tail -2 $OUT/experts.txt
