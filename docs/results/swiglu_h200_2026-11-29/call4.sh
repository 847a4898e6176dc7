# session 50, call 4 (from the repository root, .whl carried): the bench's training section
# again, each backward through autograd.grad of one retained graph (call 3's fwd+bwd column
# timed .backward() on leaves, whose grads also accumulated), on a copy of docs/benchmarks.md
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 150 python3 -m qarl_kernels.bench --only training --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call4_bench.txt
