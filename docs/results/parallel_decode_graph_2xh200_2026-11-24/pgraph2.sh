#!/usr/bin/env bash
# Session 27, calls 3-4 (2 GPUs): the parallel decode-graph tests after the capture moved to a
# bucket's second step; the tiny example at EP2 and TP2 with the graph (session 26's
# two_gpu.sh runs, eager then). The tests run beside the EP2 run (its rollout times are not
# clean).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O /tmp/r
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
t0=$(date +%s)
( timeout 300 python3 -m pytest -q -p no:cacheprovider tests/trainer/test_parallel_decode_graph.py "tests/trainer/test_embedded_engine.py::test_cuda_graph_decoding_equals_eager_decoding" > $O/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s" >> $O/tests.txt ) &
TESTS=$!
TP="--tensor-model-parallel-size 2 --sequence-parallel --expert-tensor-parallel-size 1 --expert-model-parallel-size 1"
EP="--expert-model-parallel-size 2"
QARL="--rollout-quant w4a16 --aligned-learner --loss tbpo"
run() { name=$1; ws=$2; shift 2; t0=$(date +%s)
  NPROC=2 WARM_START=/tmp/r/ws-$ws SAVE=/tmp/r/$name timeout 200 bash examples/tiny/train.sh gpu --train-iters 60 "$@" > /tmp/r/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s" | tee -a $O/walls.txt
  cp /tmp/r/$name/rl/metrics.jsonl $O/$name.jsonl; grep -i "decode steps" /tmp/r/$name.log | sort -u; tail -2 /tmp/r/$name.log; }
run ep2-qarl-replay-graph ep2 $EP $QARL --rollout-routing-replay
wait $TESTS; tail -1 $O/tests.txt; grep -E "passed|failed|Error" $O/tests.txt | tail -8
run tp2-etp1-qarl-replay-graph tp2 $TP $QARL --rollout-routing-replay
tail -n 30 /tmp/r/*.log > $O/log_tails.txt
python3 .gpu/summary.py $O | tee $O/summary.txt
