# Call 3 (nvidia-h200): the W4A16-rollout + bf16-learner GRPO baseline with its learner's experts
# grouped (--moe-grouped-gemm), so its train phase compares with QaRL's on the same code path
# (call 1's ran Megatron's SequentialMLP); and the build no longer warns about the router dtype.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log --oneline -1
R=$OUT/reduced; mkdir -p $R
QUANT=0 TIMEOUT=100 VARIANTS="w4a16-rollout-grpo w4a16-qarl-tbpo" \
  examples/qwen3_30b_a3b/bench_reduced.sh $R --moe-grouped-gemm > $OUT/call3_reduced.log 2>&1
grep "===" $OUT/call3_reduced.log; echo "router warnings: $(grep -c 'without fp32 routing' $OUT/call3_reduced.log)"
python3 docs/results/step_refresh_h200_2026-11-30/summarize.py $R | tee $OUT/call3_summary.txt
tar czf $OUT/call3_reduced.tgz -C $OUT reduced
rm -rf $R
