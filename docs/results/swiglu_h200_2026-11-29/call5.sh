# session 50, call 5 (from the repository root, .whl carried): the FP8 GEMM table with medians
# of 7 rounds; the tiny RL comparison on the GPU with the training SwiGLU kernels in the bf16
# learner (as session 49's call 4 ran it)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 docs/results/swiglu_h200_2026-11-29/fp8_rounds.py 7 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call5_fp8_rounds.txt
start=$(date +%s)
STEPS=60 timeout 330 bash examples/tiny/compare.sh gpu /tmp/tiny > $OUT/call5_compare_log.txt 2>&1
echo "compare rc=$? in $(( $(date +%s) - start )) s"
for v in bf16-grpo w4a16-rollout-grpo w4a16-qarl-tbpo; do
  cp /tmp/tiny/$v/rl/metrics.jsonl $OUT/call5_$v.jsonl
done
cp /tmp/tiny/warm-start/metrics.jsonl $OUT/call5_warm-start.jsonl 2>/dev/null
cp /tmp/tiny/tiny_comparison.png $OUT/ 2>/dev/null
grep -h '"summary"' $OUT/call5_*.jsonl
