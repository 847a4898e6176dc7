#!/usr/bin/env bash
# Session 33, 2 GPUs: the 2-process tests under NCCL (decode graphs in 4 layouts, Muon TP2+EP2,
# grouped bf16 experts under EP2, EP lockstep, TP expert copies, --deterministic-mode repeats),
# and, beside them, the tiny example with Muon in both phases under EP2 and TP2.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 -c "import torch, triton, megatron.core as m; print(torch.__version__, triton.__version__, m.__version__)" 2>&1 | tee -a $OUT/gpu.txt
git log -1 --format=%h >> $OUT/gpu.txt 2>/dev/null
mkdir -p /tmp/r $OUT/tiny
TP="--tensor-model-parallel-size 2 --sequence-parallel --expert-tensor-parallel-size 1 --expert-model-parallel-size 1"
run() { name=$1; shift; t0=$(date +%s)
  NPROC=2 SAVE=/tmp/r/$name timeout 260 bash examples/tiny/train.sh gpu --train-iters 60 "$@" > /tmp/r/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/tiny/walls.txt
  cp /tmp/r/$name/rl/metrics.jsonl $OUT/tiny/$name.jsonl 2>/dev/null; tail -n 30 /tmp/r/$name.log > $OUT/tiny/$name.log_tail; }
( run ep2-muon --expert-model-parallel-size 2 --optimizer muon --rollout-routing-replay
  run tp2-muon $TP --optimizer muon --rollout-routing-replay ) &
start=$(date +%s)
timeout 540 python3 -m pytest -q -n 4 -rs -p no:cacheprovider tests/trainer/test_parallel_decode_graph.py \
  tests/trainer/test_end_to_end.py tests/trainer/test_deterministic_mode.py \
  -k "nccl or graphed_decode_under or two_gpu" > $OUT/tests.txt 2>&1
echo "pytest rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/tests.txt
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -25
wait
cat $OUT/tiny/walls.txt
for f in $OUT/tiny/*.log_tail; do echo "== $f"; grep -E "reward|mismatch" $f | tail -4; done
