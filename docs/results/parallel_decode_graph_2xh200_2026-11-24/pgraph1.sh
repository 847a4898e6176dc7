#!/usr/bin/env bash
# Session 27, call 1 (2 GPUs): CUDA-graphed decode under TP / EP: the tests, then decode-step
# profiles of 3 Qwen3-30B-A3B layers, eager and graphed, EP2, TP2 and one GPU.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" >> $O/gpu.txt
git log --oneline -1 >> $O/gpu.txt 2>/dev/null
cat $O/gpu.txt
t0=$(date +%s)
timeout 300 python3 -m pytest -q -x -p no:cacheprovider tests/trainer/test_parallel_decode_graph.py "tests/trainer/test_embedded_engine.py::test_cuda_graph_decoding_equals_eager_decoding" > $O/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -30 $O/tests.txt | grep -v "Warning\|warn" | tail -25
prof() { name=$1; shift; t0=$(date +%s)
  timeout 120 "$@" --layers 3 --batch 32 --new-tokens 64 > $O/profile-$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s: $(grep 'ms per decode' $O/profile-$name.txt)"; grep -i "error\|Traceback" $O/profile-$name.txt | head -5; }
TR="torchrun --standalone --nproc-per-node 2 tools/profile_embedded_decode.py"
prof ep2-graph $TR --expert-model-parallel-size 2
prof ep2-eager $TR --expert-model-parallel-size 2 --no-cuda-graph
prof tp2-graph $TR --tensor-model-parallel-size 2
prof tp2-eager $TR --tensor-model-parallel-size 2 --no-cuda-graph
prof one-graph python3 tools/profile_embedded_decode.py
