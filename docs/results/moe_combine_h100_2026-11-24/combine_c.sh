#!/usr/bin/env bash
# Session 31: the combine table into docs/benchmarks.md, then the 3-layer reduction, QaRL-TBPO,
# 3 steps, plain twice and deterministic once, one lease (the first step's mismatch should repeat).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 120 python3 -m qarl_kernels.bench --only combine --doc docs/benchmarks.md 2>&1 | grep -v Warn | grep "^|" | tee $OUT/bench_combine.txt
cp docs/benchmarks.md $OUT/
for mode in plain plain2 det; do
  F=(); [ $mode = det ] && F=(--deterministic-mode)
  QUANT=0 STEPS=3 TIMEOUT=150 VARIANTS=w4a16-qarl-tbpo examples/qwen3_30b_a3b/bench_reduced.sh $OUT/$mode "${F[@]}" > $OUT/$mode.log 2>&1
  echo "== $mode rc=$?"
  grep "^step" $OUT/$mode.log
done
