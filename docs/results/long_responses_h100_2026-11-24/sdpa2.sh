#!/usr/bin/env bash
# After excluding cuDNN's SDPA: the 3-layer reduction with 2048- and 4096-token responses, sdpa.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; }
python3 -c "import safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm
O=$OUT/sdpa2; mkdir -p $O /tmp/r
for run in "2048 sdpa" "4096 sdpa"; do set -- $run
  t0=$(date +%s)
  QUANT=0 VARIANTS=w4a16-qarl-tbpo NEW_TOKENS=$1 STEPS=2 MBS=4 TIMEOUT=200 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/red2-$1-$2 --attention-backend $2 > /tmp/r/red2-$1-$2.log 2>&1
  echo "$1 $2: $(( $(date +%s) - t0 )) s wall" | tee -a $O/walls.txt
  grep -m1 "OutOfMemory" /tmp/r/red2-$1-$2.log
  cp /tmp/red2-$1-$2/w4a16-qarl-tbpo.jsonl $O/reduced-$1-$2.jsonl 2>/dev/null
  cp /tmp/red2-$1-$2/smi.csv $O/smi-$1-$2.csv 2>/dev/null
done
tail -3 /tmp/r/red2-4096-sdpa.log
