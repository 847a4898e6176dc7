#!/usr/bin/env bash
# Session 30: the 3-layer reduction, QaRL-TBPO, 3 steps, without and with --deterministic-mode.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
for mode in plain det; do
  F=(); [ $mode = det ] && F=(--deterministic-mode)
  QUANT=0 STEPS=3 TIMEOUT=170 VARIANTS=w4a16-qarl-tbpo examples/qwen3_30b_a3b/bench_reduced.sh $OUT/$mode "${F[@]}" > $OUT/$mode.log 2>&1
  echo "== $mode rc=$?"; grep -v -i warn $OUT/$mode.log | grep -i "error\|Traceback" | head -5
  python3 - $OUT/$mode/w4a16-qarl-tbpo.jsonl <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r.get("event") == "train":
        keys = [k for k in r if k.startswith(("mismatch", "time", "tokens_per_s"))]
        print({k: r[k] for k in sorted(keys)})
PY
done
