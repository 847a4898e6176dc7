#!/usr/bin/env bash
# Session 29: sampling inside the decode graph. The engine tests on the GPU (graphed and eager
# decoding bit for bit), then an A/B of the decode-step profile: the previous generate.py and
# decode_graph.py (81a455d, in .gpu/old_embedded/) in a copy of the tree, against this tree.
set -uo pipefail
export PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm math-verify pytest-xdist; }
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
rm -rf /tmp/oldrepo && cp -r $PWD /tmp/oldrepo && cp .gpu/old_embedded/*.py /tmp/oldrepo/megatron_qarl/rollout/embedded/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
PYTHONPATH=/tmp/pp:$PWD:/tmp/site timeout 200 python3 -m pytest -q -n 4 -p no:cacheprovider tests/trainer/test_embedded_engine.py tests/trainer/test_sampling.py 2>&1 | tail -3 | tee $OUT/tests.txt
A="--layers 3 --batch 32 --new-tokens 64"
for i in 1 2; do
  for v in old new; do
    for s in "w4a16" "none --moe-grouped-gemm"; do
      if [ $v = old ]; then R=/tmp/oldrepo; else R=$PWD; fi
      echo "=== $v, --scheme $s, run $i" >> $OUT/ab.txt
      (cd $R && PYTHONPATH=/tmp/pp:$R:/tmp/site timeout 100 python3 tools/profile_embedded_decode.py $A --scheme $s 2>&1 | grep -v -i warn | tail -40 >> $OUT/ab.txt)
      echo "$v $s: $(grep 'per decode step' $OUT/ab.txt | tail -1 | cut -c1-220)"
    done
  done
done
