#!/usr/bin/env bash
# Session 29: the Megatron-layers step times with the bf16 grouped baseline, then the whole
# test suite on the GPU (math-verify and compressed-tensors carried).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm math-verify pytest-xdist; }
python3 -c "import pydantic, psutil" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/ct --target /tmp/site pydantic psutil
python3 -c "import compressed_tensors" 2>/dev/null || python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/ct/compressed_tensors-*.whl .whl/ct/loguru-*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 -c "import torch, triton, transformers, compressed_tensors, math_verify, megatron.core as m; print(torch.__version__, triton.__version__, transformers.__version__, compressed_tensors.__version__, m.__version__)" 2>&1 | tail -1 | tee -a $OUT/gpu.txt
timeout 170 python3 tools/bench_megatron_layers.py --steps 4 --warmup 3 --tiny-steps 8 --schemes none,w4a16,fp8-block --keep-operand --grouped-bf16 --out $OUT/megatron_layers.json 2>&1 | grep -v -i warn | tail -14 | tee $OUT/megatron_layers.txt
start=$(date +%s)
timeout 400 python3 -m pytest -q -n 8 -rs -p no:cacheprovider tests > $OUT/gpu_tests.txt 2>&1
echo "pytest rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/gpu_tests.txt
grep -E "^(FAILED|ERROR) |passed|failed" $OUT/gpu_tests.txt | tail -15
