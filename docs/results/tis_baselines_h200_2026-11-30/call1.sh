# Call 1 (nvidia-h200): the tiny three-way comparison with the baselines on GRPO + TIS
# (--mismatch-correction tis, the paper's section 4 set-up; compare.sh since session 65).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
STEPS=60 bash examples/tiny/compare.sh gpu $OUT/compare > $OUT/call1_compare.log 2>&1
echo "compare rc=$? $(( $(date +%s) - start )) s"
tail -8 $OUT/call1_compare.log
cp $OUT/compare/tiny_comparison.png $OUT/
tar czf $OUT/call1_metrics.tgz -C $OUT compare/bf16-grpo/rl/metrics.jsonl \
  compare/w4a16-rollout-grpo/rl/metrics.jsonl compare/w4a16-qarl-tbpo/rl/metrics.jsonl
rm -rf $OUT/compare
