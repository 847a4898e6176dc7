#!/usr/bin/env bash
# Session 30: the deterministic-mode and embedded-engine GPU tests at the final commit.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import xdist" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site pytest pytest-xdist
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 300 python3 -m pytest -q -p no:cacheprovider -n 4 tests/trainer/test_deterministic_mode.py tests/trainer/test_embedded_engine.py 2>&1 | tail -1 | tee $OUT/tests_final.txt
