#!/usr/bin/env bash
# Session 31: routed_sum counting small maps in the kernel: GPU tests, the threshold, the bench
# section, the decode step's lone replays.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import pytest, xdist, safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site pytest-xdist safetensors tqdm
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 4 tests/kernels/test_routed_sum.py tests/trainer/test_deterministic_mode.py tests/trainer/test_embedded_engine.py 2>&1 | grep -E "passed|failed|FAILED|Error" | tail -8 | tee $OUT/tests_f.txt
timeout 120 python3 .gpu/count_threshold.py 2>&1 | grep -v -i warn | tee $OUT/count_threshold.txt
timeout 120 python3 -m qarl_kernels.bench --only combine --doc docs/benchmarks.md 2>&1 | grep "^|" | tee $OUT/bench_combine_f.txt
cp docs/benchmarks.md $OUT/
timeout 200 python3 .gpu/combine_replay.py 2>&1 | grep -v -i warn | grep "deterministic=" | tee $OUT/combine_replay_f.txt
