#!/usr/bin/env bash
# Session 36, call 6: the whole suite at HEAD; the Gluon kernel on dense weights (probe).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 120 python3 .gpu/gluon_dense.py 2>&1 | grep -v Warn | tee $OUT/gluon_dense.txt
timeout 440 python3 -m pytest -q -n 8 tests > $OUT/full_suite.txt 2>&1; echo "suite rc=$?"; tail -15 $OUT/full_suite.txt
