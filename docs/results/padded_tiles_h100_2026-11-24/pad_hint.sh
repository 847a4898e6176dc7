#!/usr/bin/env bash
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1 2>/dev/null
timeout 240 python3 .gpu/pad_hint.py 2>&1 | tee $OUT/pad_hint.txt
timeout 300 python3 -m pytest -q -x -p no:cacheprovider tests/kernels/test_routed_rows.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_fp8.py tests/kernels/test_w4a16_gemm.py tests/kernels/test_w4a16_gluon.py -k "not compiles" 2>&1 | tail -15 | tee $OUT/tests.txt
