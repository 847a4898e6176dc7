set -x
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
[ -d /tmp/site/megatron ] || pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python -c "import triton, sys; print('triton', triton.__version__, sys.version)"
python .gpu/muon_check.py 2>&1 | grep -v -i "warn" | tee $OUT/muon_check.txt
python -m pytest -q -p no:cacheprovider tests/megatron/test_muon.py 2>&1 | tail -2 | tee $OUT/muon_tests.txt
export OMP_NUM_THREADS=4
( time SAVE=/tmp/tiny-muon bash examples/tiny/train.sh gpu --optimizer muon --no-progress-bar ) > $OUT/tiny_gpu_muon.log 2>&1
grep -aE "reward \(greedy|^real" $OUT/tiny_gpu_muon.log
cp /tmp/tiny-muon/rl/metrics.jsonl $OUT/tiny_gpu_muon_metrics.jsonl
