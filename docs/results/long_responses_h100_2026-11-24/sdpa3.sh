#!/usr/bin/env bash
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; }
python3 -c "import safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm
O=$OUT/sdpa3; mkdir -p $O
t0=$(date +%s)
QUANT=0 VARIANTS=w4a16-qarl-tbpo NEW_TOKENS=2048 STEPS=2 MBS=4 TIMEOUT=200 bash examples/qwen3_30b_a3b/bench_reduced.sh /tmp/red3 --attention-backend sdpa > $O/log.txt 2>&1
echo "2048 sdpa: $(( $(date +%s) - t0 )) s wall" | tee -a $O/walls.txt
cp /tmp/red3/w4a16-qarl-tbpo.jsonl $O/reduced-2048-sdpa.jsonl; cp /tmp/red3/smi.csv $O/smi-2048-sdpa.csv
grep -v "^W\|warn" $O/log.txt | grep -i "error\|Traceback" | tail -5
