export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
[ -d /tmp/site/megatron ] || pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
python .gpu/muon_check.py 2>&1 | grep -v -i "warn" | tee $OUT/muon_check2.txt
export OMP_NUM_THREADS=4
( time SAVE=/tmp/tiny-adam bash examples/tiny/train.sh gpu --no-progress-bar ) > $OUT/tiny_gpu_adam.log 2>&1
grep -aE "reward \(greedy|^real" $OUT/tiny_gpu_adam.log
cp /tmp/tiny-adam/rl/metrics.jsonl $OUT/tiny_gpu_adam_metrics.jsonl
( time WARM_START=/tmp/tiny-adam/warm-start SAVE=/tmp/tiny-adam-muon bash examples/tiny/train.sh gpu --optimizer muon --no-progress-bar ) > $OUT/tiny_gpu_muon_rl.log 2>&1
grep -aE "reward \(greedy|^real" $OUT/tiny_gpu_muon_rl.log
cp /tmp/tiny-adam-muon/rl/metrics.jsonl $OUT/tiny_gpu_muon_rl_metrics.jsonl
