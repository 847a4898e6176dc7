#!/usr/bin/env bash
# Session 35, call 2: one binary for sampler and learner; tests, learner bits, tiny example, decode A/B.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_token_logprobs_kernel.py tests/trainer/test_sampler_learner_logprobs.py tests/trainer/test_embedded_engine.py tests/trainer/test_deterministic_mode.py tests/kernels/test_register.py > $OUT/tests.txt 2>&1; echo "pytest rc=$?" | tee -a $OUT/tests.txt
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -8
timeout 100 python3 .gpu/logprob_learner.py $OUT > $OUT/logprob_learner.txt 2>&1; echo "learner rc=$?"
grep -E '^ "(logprob|entropy|grad|engine)|^kernel|^chunked' $OUT/logprob_learner.txt
start=$(date +%s)
SAVE=/tmp/tiny-w4 timeout 200 bash examples/tiny/train.sh gpu > $OUT/tiny.log 2>&1
echo "tiny rc=$? $(( $(date +%s) - start )) s"
grep -E "reward \(greedy|decode steps" $OUT/tiny.log | tail -3
tr '\r' '\n' < $OUT/tiny.log | grep -o "mismatch_abs_log_w_token=[^ ]*" | sort | uniq -c
for run in 1 2; do
  for mode in new old; do
    if [ $mode = new ]; then PP=$PYTHONPATH; else PP=$PWD/.gpu/nolp:$PYTHONPATH; fi
    PYTHONPATH=$PP timeout 100 python3 tools/profile_embedded_decode.py --layers 3 --new-tokens 64 --attention-backend sdpa --batch 256 > $OUT/decode_${mode}_b256_$run.txt 2>&1
    echo "decode $mode run $run rc=$?: $(grep -o 'sdpa attention: .*' $OUT/decode_${mode}_b256_$run.txt | cut -c17-120)"; grep -o "GPU busy [0-9.]* ms" $OUT/decode_${mode}_b256_$run.txt
  done
done
