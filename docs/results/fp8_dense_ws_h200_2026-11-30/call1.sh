# session 57, call 1 (from the repository root, .whl carried): the dense FP8 calls through the
# WS Gluon kernel against cuBLAS (dense_ws_probe.py), then the whole GPU test suite but the
# SGLang bridge's (its fixture installs SGLang from PyPI) with xdist's default distribution
D=docs/results/fp8_dense_ws_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call1_gpu.txt
git log -1 --format=%h >> $OUT/call1_gpu.txt 2>/dev/null
timeout 150 python3 $D/dense_ws_probe.py 2>&1 | tee $OUT/call1_probe.txt | grep -v "by round"
timeout 400 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests --ignore=tests/rollout_sglang \
  --durations=15 > $OUT/call1_pytest.txt 2>&1
echo pytest rc=$?; tail -25 $OUT/call1_pytest.txt
