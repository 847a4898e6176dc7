#!/usr/bin/env bash
# Session 31: KV-cache writes by write_rows: tests, the decode step's kernels with the flag off/on,
# the lone-replay A/B of the combines again, then the RL pair (plain, deterministic).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import pytest, xdist, safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site pytest-xdist safetensors tqdm
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 4 tests/kernels/test_write_rows.py tests/kernels/test_routed_sum.py tests/kernels/test_register.py tests/trainer/test_deterministic_mode.py tests/trainer/test_embedded_engine.py 2>&1 | grep -E "passed|failed|FAILED|Error" | tail -12 | tee $OUT/tests_kv.txt
timeout 200 python3 .gpu/det_decode_diff.py 2>&1 | grep -v -i warn | tail -32 | tee $OUT/det_decode_diff_kv.txt
timeout 200 python3 .gpu/combine_replay.py 2>&1 | grep -v -i warn | grep "deterministic=" | tee $OUT/combine_replay_kv.txt
for mode in plain det; do
  F=(); [ $mode = det ] && F=(--deterministic-mode)
  QUANT=0 STEPS=3 TIMEOUT=150 VARIANTS=w4a16-qarl-tbpo examples/qwen3_30b_a3b/bench_reduced.sh /tmp/rl_$mode "${F[@]}" > $OUT/rl_kv_$mode.log 2>&1
  echo "== $mode rc=$?"; grep "^step" $OUT/rl_kv_$mode.log
done
