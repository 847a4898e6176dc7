export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
[ -d /tmp/site/megatron ] || pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
python .gpu/race_bench.py 2>&1 | grep -v -i warn | tee $OUT/race_bench.txt
python -m pytest -q -p no:cacheprovider -n 4 tests/kernels/test_race_argmax.py tests/kernels/test_register.py tests/trainer/test_sampling.py tests/trainer/test_embedded_engine.py tests/trainer/test_deterministic_mode.py 2>&1 | tail -3 | tee $OUT/race_tests.txt
for b in 32 256 512; do
  for which in reference kernel; do
    if [ $which = reference ]; then RUN="python .gpu/ref_sampler.py"; else RUN=python; fi
    echo "=== batch $b, $which race"
    timeout 120 $RUN tools/profile_embedded_decode.py --layers 3 --batch $b --new-tokens 64 --attention-backend sdpa --top 12 2>&1 | grep -v -i warn > $OUT/decode_b${b}_$which.txt
    grep "per decode step" $OUT/decode_b${b}_$which.txt
  done
done
