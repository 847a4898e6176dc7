#!/usr/bin/env bash
# Session 35, call 1: token-logprob kernels (sampler + learner): GPU tests, bench, learner A/B,
# decode-step A/B, tiny example.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_token_logprobs_kernel.py tests/trainer/test_sampler_learner_logprobs.py tests/trainer/test_token_logprobs.py tests/trainer/test_sampling.py tests/kernels/test_race_argmax.py tests/kernels/test_register.py tests/trainer/test_embedded_engine.py tests/trainer/test_deterministic_mode.py > $OUT/tests.txt 2>&1; echo "pytest rc=$?" | tee -a $OUT/tests.txt
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -8
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python3 -m qarl_kernels.bench --only sampler --doc $OUT/benchmarks.md > $OUT/bench_sampler.txt 2>&1
echo "bench rc=$?" | tee -a $OUT/bench_sampler.txt
grep -E "^\| [0-9]|MISMATCH|Checked|Error" $OUT/bench_sampler.txt | tail -14
timeout 120 python3 .gpu/logprob_learner.py $OUT > $OUT/logprob_learner.txt 2>&1; echo "learner rc=$?"
tail -22 $OUT/logprob_learner.txt
for b in 32 256; do
  for mode in new old; do
    if [ $mode = new ]; then pre=""; else pre=".gpu/without_logprob_kernels.py"; fi
    timeout 120 python3 $pre tools/profile_embedded_decode.py --layers 3 --new-tokens 64 --attention-backend sdpa --batch $b > $OUT/decode_${mode}_b$b.txt 2>&1
    echo "decode $mode b=$b rc=$?"; grep -iE "steady|ms a step|gpu busy" $OUT/decode_${mode}_b$b.txt | head -4
  done
done
start=$(date +%s)
SAVE=/tmp/tiny-w4 timeout 200 bash examples/tiny/train.sh gpu > $OUT/tiny.txt 2>&1
echo "tiny rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/tiny.txt
grep -E "reward \(greedy|decode steps" $OUT/tiny.txt | tail -4
tr '\r' '\n' < $OUT/tiny.txt | grep -o "mismatch_abs_log_w_token=[^ ]*" | sort | uniq -c
