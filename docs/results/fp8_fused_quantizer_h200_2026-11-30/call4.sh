# session 63, call 4 (from the repository root, .whl carried): the RL loop on the GPU at this
# tree (the last run was session 50's, at 7fbf536, before rounds 51-59): the tiny three-way
# comparison as training.md runs it, then QaRL-TBPO from the same warm start with every
# scheme on the experts and attention's projections (the dense decode kernels of rounds 54-58
# in the engine's CUDA graphs)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
STEPS=60 timeout 330 bash examples/tiny/compare.sh gpu /tmp/tiny > $OUT/call4_compare_log.txt 2>&1
echo "compare rc=$? in $(( $(date +%s) - start )) s"
for v in bf16-grpo w4a16-rollout-grpo w4a16-qarl-tbpo; do
  cp /tmp/tiny/$v/rl/metrics.jsonl $OUT/call4_$v.jsonl
done
cp /tmp/tiny/tiny_comparison.png $OUT/ 2>/dev/null
for scheme in w4a16 fp8-block int8; do
  s=$(date +%s)
  WARM_START=/tmp/tiny/warm-start SAVE=/tmp/tiny/$scheme-attention timeout 150 \
    bash examples/tiny/train.sh gpu --train-iters 60 --rollout-quant $scheme \
    --quant-targets experts+attention > $OUT/call4_${scheme}_attention_log.txt 2>&1
  echo "$scheme experts+attention rc=$? in $(( $(date +%s) - s )) s"
  cp /tmp/tiny/$scheme-attention/rl/metrics.jsonl $OUT/call4_${scheme}_attention.jsonl
done
grep -h '"summary"' $OUT/call4_*.jsonl; tail -3 $OUT/call4_*_log.txt
