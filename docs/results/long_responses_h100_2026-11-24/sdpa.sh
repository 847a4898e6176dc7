#!/usr/bin/env bash
# --attention-backend sdpa on the H100: the tiny example (QaRL-TBPO + replay, 60 steps), and the
# 3-layer Qwen3-30B-A3B reduction with 2048-token (local and sdpa) and 4096-token (sdpa) responses.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; }
python3 -c "import safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm
O=$OUT/sdpa; mkdir -p $O /tmp/r
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
t0=$(date +%s)
WARM_START=/tmp/r/ws-sdpa SAVE=/tmp/r/tiny-sdpa bash examples/tiny/train.sh gpu --train-iters 60 --rollout-quant w4a16 --aligned-learner --loss tbpo --rollout-routing-replay --attention-backend sdpa > /tmp/r/tiny-sdpa.log 2>&1
echo "tiny sdpa rc=$? $(( $(date +%s) - t0 )) s" | tee -a $O/walls.txt
cp /tmp/r/tiny-sdpa/rl/metrics.jsonl $O/tiny-w4a16-qarl-tbpo-replay-sdpa.jsonl
python3 .gpu/summary.py $O | tee $O/tiny_summary.txt
for run in "2048 local" "2048 sdpa" "4096 sdpa"; do set -- $run
  t0=$(date +%s)
  QUANT=0 VARIANTS=w4a16-qarl-tbpo NEW_TOKENS=$1 STEPS=2 MBS=4 TIMEOUT=200 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/red-$1-$2 --attention-backend $2 > /tmp/r/red-$1-$2.log 2>&1
  echo "$1 $2: $(( $(date +%s) - t0 )) s wall" | tee -a $O/walls.txt
  grep -m1 "OutOfMemory" /tmp/r/red-$1-$2.log
  cp /tmp/red-$1-$2/w4a16-qarl-tbpo.jsonl $O/reduced-$1-$2.jsonl 2>/dev/null
  cp /tmp/red-$1-$2/smi.csv $O/smi-$1-$2.csv 2>/dev/null
done
python3 - $O <<'PY'
import json, os, sys
for run in ("2048-local", "2048-sdpa", "4096-sdpa"):
    path = f"{sys.argv[1]}/reduced-{run}.jsonl"
    if not os.path.exists(path): print(run, "no metrics"); continue
    for r in [json.loads(l) for l in open(path) if '"train"' in l]:
        print(f"{run} step {r['step']}: rollout {r['time/rollout']:.1f} s, old logprobs {r['time/old_logprobs']:.2f} s, "
              f"train {r['time/train']:.2f} s, length {r['response_length_mean']:.0f}, peaks rollout/old/train "
              f"{r['mem/rollout_peak_gib']:.1f} / {r['mem/old_logprobs_peak_gib']:.1f} / {r['mem/train_peak_gib']:.1f} GiB, "
              f"mismatch {r['mismatch_abs_log_w_token']:.2e}")
    smi = f"{sys.argv[1]}/smi-{run}.csv"
    if os.path.exists(smi):
        print(run, "peak nvidia-smi MiB", max(int(l.split(",")[-1].split()[0]) for l in open(smi) if "MiB" in l))
PY
