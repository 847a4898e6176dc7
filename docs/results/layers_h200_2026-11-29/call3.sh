# session 46, call 3 (from the repository root, .whl carried): the layer step with and without
# the dense STE backward on tensor cores (dense_backward_ab.py); the INT8 kernels on the H200
# (`bench --only int8`, their own section of docs/benchmarks.md)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 260 python3 docs/results/layers_h200_2026-11-29/dense_backward_ab.py 6 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call3_ab.txt
cp docs/benchmarks.md $OUT/
timeout 200 python3 -m qarl_kernels.bench --only int8 --doc $OUT/benchmarks.md 2>&1 \
  | tee $OUT/call3_int8.txt | tail -40
