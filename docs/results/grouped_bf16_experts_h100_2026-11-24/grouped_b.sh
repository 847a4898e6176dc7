#!/usr/bin/env bash
# Session 29: the bf16 SequentialMLP decode profile (eager, 16 new tokens), then the 3-layer
# reduction's RL steps: W4A16 QaRL-TBPO, bf16 GRPO with grouped experts, bf16 GRPO
# (SequentialMLP), 2 steps of 32 x 512 tokens each.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm math-verify pytest-xdist; }
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 110 python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 16 --warmup-tokens 4 --scheme none --no-cuda-graph 2>&1 | grep -v -i warn | tail -40 > $OUT/profile_sequential.txt
tail -1 $OUT/profile_sequential.txt
QUANT=0 STEPS=2 TIMEOUT=130 VARIANTS="w4a16-qarl-tbpo bf16-grouped-grpo bf16-grpo" bash examples/qwen3_30b_a3b/bench_reduced.sh $OUT/reduced > $OUT/reduced.log 2>&1
grep "===" $OUT/reduced.log
python3 - $OUT/reduced <<'PY'
import json, os, sys
for v in ("w4a16-qarl-tbpo", "bf16-grouped-grpo", "bf16-grpo"):
    path = os.path.join(sys.argv[1], f"{v}.jsonl")
    if not os.path.exists(path):
        print(v, "no metrics"); continue
    for r in [json.loads(l) for l in open(path) if '"train"' in l]:
        print(f"{v} step {r['step']}: rollout {r['time/rollout']:.2f} s, old logprobs {r['time/old_logprobs']:.2f} s, train {r['time/train']:.2f} s, tokens/s {r['tokens_per_s']:.0f}, mismatch {r['mismatch_abs_log_w_token']:.2e}")
PY
