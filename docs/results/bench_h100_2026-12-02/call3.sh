# Call 3 (nvidia-h100-x1): the one-GPU Qwen3-30B-A3B RL reduction (3 exact layers, the full
# output layer, 32 responses of 512 tokens, 3 steps) on the H100 at this tree, every variant
# with the learner's experts grouped (--moe-grouped-gemm for the bf16 learners); last on an
# H100 2026-11-24/25, on the H200 in session 65.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
D=$OUT/reduced; mkdir -p $D
QUANT=0 TIMEOUT=100 VARIANTS="w4a16-qarl-tbpo fp8-qarl-tbpo int8-qarl-tbpo w4a16-rollout-grpo bf16-grouped-grpo" \
  examples/qwen3_30b_a3b/bench_reduced.sh $D --moe-grouped-gemm > $OUT/call3_reduced.log 2>&1
grep "===" $OUT/call3_reduced.log
python3 docs/results/step_refresh_h200_2026-11-30/summarize.py $D | tee $OUT/call3_summary.txt
grep -i "error\|traceback" $OUT/call3_reduced.log | grep -v -i "warn\|error_" | head
tar czf $OUT/call3_reduced.tgz -C $OUT reduced
rm -rf $D
