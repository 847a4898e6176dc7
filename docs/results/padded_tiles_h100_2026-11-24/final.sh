#!/usr/bin/env bash
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:$PWD/.gpu/oldk:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site pytest pytest-xdist; }
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 60 python3 .gpu/e64_rule.py 2>&1 | tee $OUT/e64_rule.txt
timeout 240 python3 .gpu/pad_hint.py 2>&1 | tee $OUT/pad_hint.txt
timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/kernels/test_w4a16_gluon.py tests/kernels/test_routed_rows.py -k "not compiles" 2>&1 | tail -5 | tee $OUT/tests.txt
