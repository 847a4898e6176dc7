#!/usr/bin/env bash
# Session 26, call 3: the W4A16 Gluon kernel's descriptor cache fix (it kept every step's lane
# codes and activations alive): Gluon tests, leak.py, the reduced QaRL run with the graph.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O
t0=$(date +%s)
timeout 300 python3 -m pytest -q -p no:cacheprovider -n 8 tests/kernels/test_w4a16_gluon.py tests/kernels/test_stream_floor.py > $O/tests_gluon.txt 2>&1
echo "gluon tests rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $O/tests_gluon.txt
timeout 200 python3 .gpu/leak.py local 2>&1 | grep "graph=" | tee $O/leak.txt
t0=$(date +%s)
QUANT=0 VARIANTS=w4a16-qarl-tbpo TIMEOUT=150 STEPS=4 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/red-graph > $O/reduced-graph.log 2>&1
echo "reduced graph rc=$? $(( $(date +%s) - t0 )) s"
mkdir -p $O/reduced-graph-fixed; cp /tmp/red-graph/*.jsonl $O/reduced-graph-fixed/
python3 - $O <<'PY'
import json, sys
for r in (json.loads(l) for l in open(f"{sys.argv[1]}/reduced-graph-fixed/w4a16-qarl-tbpo.jsonl")):
    if r["event"] == "train":
        print(r["step"], {k: round(v, 3) for k, v in r.items() if k.startswith(("time/", "mem/step_start", "mem/train_peak", "mem/rollout_peak", "mismatch_abs", "tokens_per_s"))})
PY
