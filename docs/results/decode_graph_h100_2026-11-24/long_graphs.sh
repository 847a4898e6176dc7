#!/usr/bin/env bash
# Session 26, call 5: long responses (2048, 4096 tokens) with --attention-backend sdpa and the
# decode graph: the 3-layer Qwen3-30B-A3B reduction, W4A16 QaRL-TBPO, micro-batches of 4, 2 steps.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; }
python3 -c "import safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm
O=$OUT/long; mkdir -p $O
for tokens in 2048 4096; do
  t0=$(date +%s)
  QUANT=0 VARIANTS=w4a16-qarl-tbpo NEW_TOKENS=$tokens STEPS=2 MBS=4 TIMEOUT=230 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/long$tokens --attention-backend sdpa > $O/log_$tokens.txt 2>&1
  echo "$tokens tokens: rc=$? $(( $(date +%s) - t0 )) s wall" | tee -a $O/walls.txt
  grep -i "error\|out of memory" $O/log_$tokens.txt | head -3
  cp /tmp/long$tokens/w4a16-qarl-tbpo.jsonl $O/w4a16-qarl-tbpo-$tokens.jsonl
  cp /tmp/long$tokens/smi.csv $O/smi_$tokens.csv 2>/dev/null
done
python3 - $O <<'PY'
import json, os, sys
for tokens in (2048, 4096):
    rows = [json.loads(l) for l in open(f"{sys.argv[1]}/w4a16-qarl-tbpo-{tokens}.jsonl")]
    for r in [r for r in rows if r["event"] == "train"]:
        print(f"{tokens} step {r['step']}: rollout {r['time/rollout']:.1f} s, old logprobs {r['time/old_logprobs']:.2f} s, "
              f"train {r['time/train']:.2f} s, length {r['response_length_mean']:.0f}, peaks rollout/old/train "
              f"{r['mem/rollout_peak_gib']:.1f} / {r['mem/old_logprobs_peak_gib']:.1f} / {r['mem/train_peak_gib']:.1f} GiB, "
              f"mismatch {r['mismatch_abs_log_w_token']:.2e}, tok/s {r['tokens_per_s']:.0f}")
    smi = f"{sys.argv[1]}/smi_{tokens}.csv"
    if os.path.exists(smi):
        used = [int(l.split(",")[-1].split()[0]) for l in open(smi) if "MiB" in l]
        print(f"{tokens}: peak nvidia-smi memory.used {max(used)} MiB")
PY
