#!/usr/bin/env bash
# Session 26, call 1: CUDA-graphed decode steps of the embedded engine. GPU tests, then
# tools/profile_embedded_decode.py with and without the graph, alternating.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c "import torch,triton,sys;print(torch.__version__,triton.__version__,sys.version.split()[0])"; date -u; } > $O/env.txt 2>&1
cat $O/env.txt
t0=$(date +%s)
timeout 400 python3 -m pytest -q -x -p no:cacheprovider tests/trainer/test_embedded_engine.py tests/megatron/test_token_dispatch.py -rs > $O/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "passed|failed|Error|SKIP" $O/tests.txt | tail -8
for rep in 1 2; do for g in cuda-graph no-cuda-graph; do
  t0=$(date +%s)
  timeout 240 python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64 --$g > $O/profile-w4a16-$g-$rep.txt 2>&1
  echo "w4a16 $g $rep rc=$? $(( $(date +%s) - t0 )) s: $(tail -1 $O/profile-w4a16-$g-$rep.txt)"
done; done
for g in cuda-graph no-cuda-graph; do
  timeout 240 python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64 --scheme fp8-block --$g > $O/profile-fp8-$g.txt 2>&1
  echo "fp8 $g rc=$?: $(tail -1 $O/profile-fp8-$g.txt)"
done
timeout 240 python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64 --attention-backend sdpa > $O/profile-w4a16-sdpa-graph.txt 2>&1
echo "sdpa graph rc=$?: $(tail -1 $O/profile-w4a16-sdpa-graph.txt)"
