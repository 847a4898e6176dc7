#!/usr/bin/env bash
# Session 30: --deterministic-mode without torch's fill of new tensors: its GPU test, then the
# 3-layer reduction, QaRL-TBPO, 3 steps, plain and deterministic, one lease.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import safetensors, tqdm, pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest-xdist
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/trainer/test_deterministic_mode.py 2>&1 | tail -1 | tee $OUT/tests_nofill.txt
for mode in plain det; do
  F=(); [ $mode = det ] && F=(--deterministic-mode)
  QUANT=0 STEPS=3 TIMEOUT=170 VARIANTS=w4a16-qarl-tbpo examples/qwen3_30b_a3b/bench_reduced.sh $OUT/$mode "${F[@]}" > $OUT/$mode.log 2>&1
  echo "== $mode rc=$?"
  grep "^step" $OUT/$mode.log
  python3 - $OUT/$mode/w4a16-qarl-tbpo.jsonl <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r.get("event") == "train":
        print({k: round(r[k], 4) for k in ("time/rollout", "time/old_logprobs", "time/train")})
PY
done
