# Call 3 (nvidia-h200): tools/bench_rl_phases.py quantize after it times the trainer's path (the
# cache with the CUDA kernels registered) apart from the reference path.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
python -m pytest -q tests/trainer/test_bench_rl_phases.py -p no:cacheprovider 2>&1 | tail -1
timeout 300 python tools/bench_rl_phases.py quantize --layers 48 --json $OUT/call3_quantize.json > $OUT/call3_quantize.txt 2>&1
echo "rc=$?"; tail -30 $OUT/call3_quantize.txt
