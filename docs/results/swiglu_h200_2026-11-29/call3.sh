# session 50, call 3 (from the repository root, .whl carried): the bench's new training
# section (--only training) on a copy of docs/benchmarks.md, and the GPU tests of the Megatron
# layers and the trainer with the training SwiGLU registered
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 150 python3 -m qarl_kernels.bench --only training --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call3_bench.txt
timeout 360 python3 -m pytest -q -n 16 -p no:cacheprovider tests/megatron tests/trainer \
  tests/kernels/test_swiglu_training.py 2>&1 | tail -2 | tee $OUT/call3_pytest.txt
