# Call 1 (nvidia-h200): the one-GPU Qwen3-30B-A3B RL reduction (3 exact layers, 32 responses of
# 512 tokens, 3 steps) at HEAD, every variant, to see the end-to-end step after the decode and
# FP8 kernel changes since its last run (H100, 2026-11-24/25).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log --oneline -1
R=$OUT/reduced; mkdir -p $R
QUANT=0 TIMEOUT=100 VARIANTS="w4a16-qarl-tbpo fp8-qarl-tbpo int8-qarl-tbpo w4a16-rollout-grpo bf16-grouped-grpo" \
  examples/qwen3_30b_a3b/bench_reduced.sh $R > $OUT/call1_reduced.log 2>&1
grep "===" $OUT/call1_reduced.log
python3 docs/results/step_refresh_h200_2026-11-30/summarize.py $R | tee $OUT/call1_summary.txt
grep -i "error\|traceback" $OUT/call1_reduced.log | grep -v -i "warn\|error_" | head
tar czf $OUT/call1_reduced.tgz -C $OUT reduced
rm -rf $R
