# Session 71, call 6: fc2's staged prob epilogue on the rules' 64 x 128 tiles of 2 stages
# (gluon_stage_acc): the Gluon, rules, WS, prob-epilogue and launch-cache tests; the experts
# block into a copy of docs/benchmarks.md; epilogue_ab.py on this tree (call 3's figures).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 python -m pytest tests/kernels/test_w4a16_gluon.py tests/kernels/test_w4a16_gluon_rules.py \
  tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_router_prob_epilogue.py \
  tests/kernels/test_launch_cache.py -q -rf -n 16 -p no:cacheprovider > $OUT/kernel_tests.txt 2>&1
tail -3 $OUT/kernel_tests.txt
timeout 60 python docs/results/suite_after_marlin_order_h200_2026-12-01/epilogue_ab.py staged 2>&1 | tee $OUT/epilogue_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python -m qarl_kernels.bench --only experts --doc $OUT/benchmarks.md > $OUT/experts.txt 2>&1
sed -n '/--only experts: start/,/--only experts: end/p' $OUT/benchmarks.md | grep -E "^\| (E128|EP8)|MISMATCH|cases passed" | head -16
tail -2 $OUT/experts.txt
