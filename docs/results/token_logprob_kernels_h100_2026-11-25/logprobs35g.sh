#!/usr/bin/env bash
# Session 35, call 9: the backward without the memset: GPU tests, learner times and bits.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_token_logprobs_kernel.py tests/trainer/test_sampler_learner_logprobs.py tests/trainer/test_token_logprobs.py tests/trainer/test_embedded_engine.py > $OUT/tests.txt 2>&1; echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -6
for rep in 1 2; do
timeout 100 python3 .gpu/logprob_learner.py $OUT > $OUT/logprob_learner_$rep.txt 2>&1; echo "learner rc=$?"
grep -E '^ "(logprob|entropy|grad|engine)|^kernel|^chunked' $OUT/logprob_learner_$rep.txt
done
