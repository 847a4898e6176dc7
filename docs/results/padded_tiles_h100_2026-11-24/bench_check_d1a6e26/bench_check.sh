#!/usr/bin/env bash
# session 28: the committed benches on the refactored Triton kernels (ROW_LOOP helper), into a
# copy of docs/benchmarks.md, to compare with the committed tables
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 250 python3 -m qarl_kernels.bench --doc $OUT/benchmarks.md > $OUT/bench.txt 2>&1; echo "bench rc=$?"
timeout 300 python3 -m qarl_kernels.bench --decode-only --doc $OUT/benchmarks.md > $OUT/bench_decode.txt 2>&1; echo "decode rc=$?"
tail -3 $OUT/bench.txt $OUT/bench_decode.txt
