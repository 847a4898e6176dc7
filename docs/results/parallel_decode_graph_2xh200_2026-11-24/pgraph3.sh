#!/usr/bin/env bash
# Session 27, last 2-GPU call: decode-step profiles of 3 Qwen3-30B-A3B layers at the committed
# code, eager and graphed: EP2, TP2 (expert TP 1), one GPU; W4A16 and FP8 block at EP2.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; }
O=$OUT; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" >> $O/gpu.txt
cat $O/gpu.txt
prof() { name=$1; shift; t0=$(date +%s)
  timeout 100 "$@" --layers 3 --batch 32 --new-tokens 64 > $O/profile-$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s: $(grep 'ms per decode' $O/profile-$name.txt)"; grep -i "Traceback" -A 3 $O/profile-$name.txt | tail -3; }
TR="torchrun --standalone --nproc-per-node 2 tools/profile_embedded_decode.py"
prof ep2-eager $TR --expert-model-parallel-size 2 --no-cuda-graph
prof ep2-graph $TR --expert-model-parallel-size 2
prof tp2-eager $TR --tensor-model-parallel-size 2 --no-cuda-graph
prof tp2-graph $TR --tensor-model-parallel-size 2
prof ep2-fp8-graph $TR --expert-model-parallel-size 2 --scheme fp8-block
prof ep2-fp8-eager $TR --expert-model-parallel-size 2 --scheme fp8-block --no-cuda-graph
prof one-graph python3 tools/profile_embedded_decode.py
prof one-eager python3 tools/profile_embedded_decode.py --no-cuda-graph
