# Call 4 (nvidia-h200): graph_batches.py, the one-token dense cells batch by batch.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 240 python docs/results/bench_rates_h200_2026-12-02/graph_batches.py 2>&1 | tee $OUT/call4_graph_batches.txt | tail -30
