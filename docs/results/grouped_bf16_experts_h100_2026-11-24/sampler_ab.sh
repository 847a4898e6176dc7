#!/usr/bin/env bash
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
A="--layers 3 --batch 32 --new-tokens 64 --scheme w4a16"
for i in 1 2; do
  for v in old new; do
    if [ $v = old ]; then S=.gpu/old_sampler.py; else S=tools/profile_embedded_decode.py; fi
    echo "=== $v sampler, run $i" >> $OUT/ab.txt
    timeout 100 python3 $S $A 2>&1 | grep -v -i warn | tail -40 >> $OUT/ab.txt
    echo "$v: $(grep 'per decode step' $OUT/ab.txt | tail -1)"
  done
done
