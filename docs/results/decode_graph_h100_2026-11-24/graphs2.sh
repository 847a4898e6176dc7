#!/usr/bin/env bash
# Session 26, call 2: GPU tests of the decode graph; the 3-layer Qwen3-30B-A3B reduction's QaRL
# run with and without the graph (512-token responses); the tiny example with the graph.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O
t0=$(date +%s)
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/trainer/test_embedded_engine.py tests/megatron/test_token_dispatch.py -rs > $O/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "passed|failed|Error" $O/tests.txt | tail -4
for v in graph eager; do
  t0=$(date +%s); F=(); [ $v = eager ] && F=(--no-rollout-cuda-graph)
  QUANT=0 VARIANTS=w4a16-qarl-tbpo TIMEOUT=150 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/red-$v "${F[@]}" > $O/reduced-$v.log 2>&1
  echo "reduced $v rc=$? $(( $(date +%s) - t0 )) s"; grep -i "error\|memory" $O/reduced-$v.log | head -3
  mkdir -p $O/reduced-$v; cp /tmp/red-$v/*.jsonl /tmp/red-$v/smi.csv $O/reduced-$v/ 2>/dev/null
  python3 .gpu/summary.py $O/reduced-$v
done
python3 - $O <<'PY'
import json, sys
for v in ("graph", "eager"):
    for r in (json.loads(l) for l in open(f"{sys.argv[1]}/reduced-{v}/w4a16-qarl-tbpo.jsonl")):
        if r["event"] == "train":
            print(v, r["step"], {k: r[k] for k in r if k.startswith("time/") or k in ("mismatch_abs_log_w_token", "mismatch_k3_kl", "tokens_per_s", "response_length_mean")})
PY
t0=$(date +%s); mkdir -p /tmp/r
WARM_START=/tmp/r/ws SAVE=/tmp/r/qarl-replay timeout 220 bash examples/tiny/train.sh gpu --train-iters 60 --rollout-quant w4a16 --aligned-learner --loss tbpo --rollout-routing-replay > $O/tiny.log 2>&1
echo "tiny rc=$? $(( $(date +%s) - t0 )) s"; mkdir -p $O/tiny; cp /tmp/r/qarl-replay/rl/metrics.jsonl $O/tiny/w4a16-qarl-tbpo-replay.jsonl; python3 .gpu/summary.py $O/tiny; grep -i "decode steps" $O/tiny.log | head -2
