#!/usr/bin/env bash
# The chunked log-probs with autograd's own backward ops: alone (logprob_mem.py) and in the
# 3-layer reduction at 16-response micro-batches, old path vs new.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; }
python3 -c "import safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm
O=$OUT/recheck; mkdir -p $O
python3 .gpu/logprob_mem.py $O > $O/logprob_mem.txt 2>&1; head -3 $O/logprob_mem.txt
for v in new old; do
  if [ $v = old ]; then export QARL_OLD_LOGPROBS=1 PYTHONPATH=$PWD/.gpu/oldlp:/tmp/pp:$PWD:/tmp/site; else unset QARL_OLD_LOGPROBS; export PYTHONPATH=/tmp/pp:$PWD:/tmp/site; fi
  QUANT=0 VARIANTS=w4a16-qarl-tbpo MBS=16 TIMEOUT=120 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/rc-$v > /tmp/rc-$v.log 2>&1
  cp /tmp/rc-$v/w4a16-qarl-tbpo.jsonl $O/$v-mbs16.jsonl
done
python3 - $O <<'PY'
import json, os, sys
for v in ("new", "old"):
    for r in [json.loads(l) for l in open(f"{sys.argv[1]}/{v}-mbs16.jsonl") if '"train"' in l]:
        print(f"{v} step {r['step']}: train {r['time/train']:.3f} s, old logprobs {r['time/old_logprobs']:.3f} s, peaks old/train {r['mem/old_logprobs_peak_gib']:.2f} / {r['mem/train_peak_gib']:.2f} GiB, mismatch {r['mismatch_abs_log_w_token']:.3e}")
PY
