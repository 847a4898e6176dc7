#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 300 python3 .gpu/combine_bench.py 2>&1 | tee $OUT/combine_bench.txt
