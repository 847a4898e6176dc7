#!/usr/bin/env bash
# Tiny example on 2 GPUs: TP2 + SP with expert-TP 1 / EP 1 (the layout fixed in 4efaaca), with and
# without routing replay, and EP2 (DP2) with replay. One warm start per layout.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; }
python3 -c "import safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm
O=$OUT/two_gpu; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" >> $O/gpu.txt
TP="--tensor-model-parallel-size 2 --sequence-parallel --expert-tensor-parallel-size 1 --expert-model-parallel-size 1"
EP="--expert-model-parallel-size 2"
QARL="--rollout-quant w4a16 --aligned-learner --loss tbpo"
run() { name=$1; ws=$2; shift 2; t0=$(date +%s)
  NPROC=2 WARM_START=/tmp/r/ws-$ws SAVE=/tmp/r/$name timeout 200 bash examples/tiny/train.sh gpu --train-iters 60 "$@" > /tmp/r/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s" | tee -a $O/walls.txt
  cp /tmp/r/$name/rl/metrics.jsonl $O/$name.jsonl; tail -3 /tmp/r/$name.log; }
mkdir -p /tmp/r
run tp2-etp1-qarl-replay tp2 $TP $QARL --rollout-routing-replay
run tp2-etp1-qarl tp2 $TP $QARL
run ep2-qarl-replay ep2 $EP $QARL --rollout-routing-replay
tail -n 30 /tmp/r/*.log > $O/log_tails.txt
python3 .gpu/summary.py $O | tee $O/summary.txt
