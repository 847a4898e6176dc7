#!/usr/bin/env bash
# Session 35, call 6: tiny example RL from one warm start (made by the torch path), torch path vs kernels.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
WS=/tmp/tiny-old/warm-start
if [ ! -d $WS ]; then
  PYTHONPATH=$PWD/.gpu/nolp:$PYTHONPATH SAVE=/tmp/tiny-old timeout 200 bash examples/tiny/train.sh gpu > $OUT/tiny_old_full.log 2>&1; echo "old full rc=$?"
fi
for which in old new; do
  if [ $which = old ]; then PP=$PWD/.gpu/nolp:$PYTHONPATH; else PP=$PYTHONPATH; fi
  start=$(date +%s); rm -rf /tmp/ab-$which
  PYTHONPATH=$PP SAVE=/tmp/ab-$which WARM_START=$WS timeout 200 bash examples/tiny/train.sh gpu > $OUT/tiny_$which.log 2>&1
  echo "tiny $which rc=$? $(( $(date +%s) - start )) s"
  grep -E "reward \(greedy" $OUT/tiny_$which.log | tail -2
  tr '\r' '\n' < $OUT/tiny_$which.log | grep -o "mismatch_abs_log_w_token=[^ ]*" | sort | uniq -c
done
