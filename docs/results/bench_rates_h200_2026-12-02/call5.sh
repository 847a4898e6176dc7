# Call 5 (nvidia-h200): gemv_ab.py, 8491af8's kernels (carried as oldk_tmp/kernels, not committed)
# against this tree's at one token.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp /tmp/oldpp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/oldk_tmp/kernels /tmp/oldpp/qarl_kernels_old
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u
timeout 240 python docs/results/bench_rates_h200_2026-12-02/gemv_ab.py 2>&1 | tee $OUT/call5_gemv_ab.txt | tail -12
