# session 49, call 4 (from the repository root, .whl carried): the tiny three-way comparison on
# the GPU at this tree (the last was session 23's, 715172b, on an H100), as training.md runs it
set -o pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
STEPS=60 timeout 500 bash examples/tiny/compare.sh gpu /tmp/tiny > $OUT/call4_compare_log.txt 2>&1
echo "compare rc=$? in $(( $(date +%s) - start )) s"
for v in bf16-grpo w4a16-rollout-grpo w4a16-qarl-tbpo; do
  cp /tmp/tiny/$v/rl/metrics.jsonl $OUT/call4_$v.jsonl
done
cp /tmp/tiny/warm-start/metrics.jsonl $OUT/call4_warm-start.jsonl 2>/dev/null
cp /tmp/tiny/tiny_comparison.png $OUT/ 2>/dev/null
grep -h '"summary"' $OUT/call4_*.jsonl
