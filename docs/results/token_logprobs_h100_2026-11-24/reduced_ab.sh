#!/usr/bin/env bash
# A/B at one commit: token log-probabilities old (whole fp32 log-softmax) vs new (chunked), the
# 3-layer Qwen3-30B-A3B reduction, 32 x 512-token responses, micro-batches of 4 and 16 responses.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
O=$OUT/ab; mkdir -p $O
for mbs in 16 4; do for v in new old; do
  if [ $v = old ]; then export QARL_OLD_LOGPROBS=1 PYTHONPATH=$PWD/.gpu/oldlp:/tmp/pp:$PWD:/tmp/site; else unset QARL_OLD_LOGPROBS; export PYTHONPATH=/tmp/pp:$PWD:/tmp/site; fi
  QUANT=0 VARIANTS=w4a16-qarl-tbpo MBS=$mbs TIMEOUT=120 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/ab-$v-$mbs > /tmp/ab-$v-$mbs.log 2>&1
  grep -c QARL_OLD_LOGPROBS /tmp/ab-$v-$mbs.log | sed "s/^/$v $mbs old-path banner lines: /"
  grep -i "error\|out of memory" /tmp/ab-$v-$mbs.log | head -3
  cp /tmp/ab-$v-$mbs/w4a16-qarl-tbpo.jsonl $O/$v-mbs$mbs.jsonl 2>/dev/null
done; done
python3 - $O <<'PY'
import json, os, sys
for name in sorted(os.listdir(sys.argv[1])):
    rows = [json.loads(l) for l in open(os.path.join(sys.argv[1], name))]
    for r in [r for r in rows if r["event"] == "train"]:
        print(f"{name} step {r['step']}: train {r['time/train']:.3f} s, old logprobs {r['time/old_logprobs']:.3f} s, rollout {r['time/rollout']:.2f} s, "
              f"peaks old/train {r.get('mem/old_logprobs_peak_gib', float('nan')):.2f} / {r.get('mem/train_peak_gib', float('nan')):.2f} GiB, "
              f"entropy {r['entropy']:.4f}, mismatch {r['mismatch_abs_log_w_token']:.3e}, loss {r['pg_loss']:.3e}")
PY
