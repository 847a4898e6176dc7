# Call 4 (nvidia-h200): README's one-GPU Qwen3-30B-A3B command (3 exact layers, QaRL-TBPO against
# the bf16 baseline with grouped experts and with Megatron's SequentialMLP), as written there.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
( time QUANT=0 STEPS=2 TIMEOUT=130 VARIANTS="w4a16-qarl-tbpo bf16-grouped-grpo bf16-grpo" \
  examples/qwen3_30b_a3b/bench_reduced.sh runs/reduced ) > $OUT/reduced.txt 2>&1; echo "rc $?"
tail -30 $OUT/reduced.txt; cp runs/reduced/*.jsonl $OUT/ 2>/dev/null; ls runs/reduced; date -u
