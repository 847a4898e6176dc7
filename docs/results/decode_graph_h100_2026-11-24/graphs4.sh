#!/usr/bin/env bash
# Session 26, call 4: one side stream for every warm-up and capture (a stream per batch leaked
# a 32 MiB cuBLAS workspace each): engine GPU tests, leak.py, the reduced QaRL run, 5 steps.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O
t0=$(date +%s)
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/trainer/test_embedded_engine.py -k cuda_graph > $O/tests_engine.txt 2>&1
echo "engine tests rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $O/tests_engine.txt
timeout 200 python3 .gpu/leak.py local 2>&1 | grep "graph=\|live blocks" | tee $O/leak.txt
t0=$(date +%s)
QUANT=0 VARIANTS=w4a16-qarl-tbpo TIMEOUT=150 STEPS=5 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/red-graph5 > $O/reduced-graph.log 2>&1
echo "reduced graph rc=$? $(( $(date +%s) - t0 )) s"
mkdir -p $O/reduced-graph-5steps; cp /tmp/red-graph5/*.jsonl $O/reduced-graph-5steps/
python3 - $O <<'PY'
import json, sys
for r in (json.loads(l) for l in open(f"{sys.argv[1]}/reduced-graph-5steps/w4a16-qarl-tbpo.jsonl")):
    if r["event"] == "train":
        print(r["step"], {k: round(v, 4) for k, v in r.items() if k.startswith(("time/rollout", "mem/step_start", "mem/train_peak", "mem/rollout_peak", "mismatch_abs_log_w_token", "tokens_per_s"))})
PY
