#!/usr/bin/env bash
# Session 26, call 8: SDPA with the KV-group fold at decode: micro-benchmark, then 4096 tokens.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O/long
timeout 120 python3 .gpu/sdpa_fold.py 2>&1 | grep -v Warn | tee $O/sdpa_fold.txt
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/megatron/test_sdpa_attention.py > $O/tests_sdpa.txt 2>&1; tail -1 $O/tests_sdpa.txt
t0=$(date +%s)
QUANT=0 VARIANTS=w4a16-qarl-tbpo NEW_TOKENS=4096 STEPS=2 MBS=4 TIMEOUT=230 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/long4096f --attention-backend sdpa > $O/long/log_4096.txt 2>&1
echo "4096 rc=$? $(( $(date +%s) - t0 )) s"
cp /tmp/long4096f/w4a16-qarl-tbpo.jsonl $O/long/w4a16-qarl-tbpo-4096.jsonl; cp /tmp/long4096f/smi.csv $O/long/smi_4096.csv
python3 - $O <<'PY'
import json, sys
for r in (json.loads(l) for l in open(f"{sys.argv[1]}/long/w4a16-qarl-tbpo-4096.jsonl")):
    if r["event"] == "train":
        print(r["step"], {k: round(v, 4) for k, v in r.items() if k.startswith(("time/", "mem/train_peak", "mem/rollout_peak", "mismatch_abs_log_w_token", "tokens_per_s", "response_length_mean"))})
used = [int(l.split(",")[-1].split()[0]) for l in open(f"{sys.argv[1]}/long/smi_4096.csv") if "MiB" in l]
print("peak nvidia-smi MiB", max(used))
PY
