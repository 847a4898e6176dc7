#!/usr/bin/env bash
# Session 29: bf16 grouped experts (--moe-grouped-gemm) on the GPU: tests, then decode-step
# profiles of the 3-layer reduction (bf16 SequentialMLP eager; bf16 grouped eager and graphed;
# W4A16 graphed), batch 32, 64 new tokens.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm math-verify pytest-xdist; }
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 280 python3 -m pytest -q -n 4 -p no:cacheprovider tests/megatron/test_grouped_bf16_experts.py tests/kernels/test_moe_backward.py tests/kernels/test_register.py tests/trainer/test_embedded_engine.py tests/trainer/test_data_and_rewards.py tests/kernels/test_routed_rows.py 2>&1 | tail -6 | tee $OUT/tests.txt
P="python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64"
for v in "none --no-cuda-graph" "none --moe-grouped-gemm --no-cuda-graph" "none --moe-grouped-gemm" "w4a16"; do
  echo "=== --scheme $v" | tee -a $OUT/profiles.txt
  timeout 100 $P --scheme $v 2>&1 | grep -v -i "warn" | tail -40 >> $OUT/profiles.txt
  grep "per decode step" $OUT/profiles.txt | tail -1
done
