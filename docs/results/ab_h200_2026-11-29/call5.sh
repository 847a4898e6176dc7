# session 45, call 5 (from the repository root, .whl carried) at 0823fb1: the dense graph tests
# that failed in call 3's first run, each alone with an empty Triton cache (their Gluon kernel
# first launched inside the capture); the kernel and Megatron-layer GPU tests; the FP8 benchmark
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t=tests/kernels/test_w4a16_gluon_dense.py
for c in "test_graphs_take_it_after_an_eager_call[512]" test_kept_operand_graphs_take_it_to_64_tokens; do
  echo "== $c alone, empty Triton cache"
  TRITON_CACHE_DIR=$(mktemp -d) timeout 90 python3 -m pytest -q -p no:warnings --tb=short "$t::$c" 2>&1 \
    | grep -v "warn" | tail -25
done 2>&1 | tee $OUT/call5_cold.txt
timeout 330 python3 -m pytest -q -n 16 -p no:warnings tests/kernels tests/megatron 2>&1 \
  | tail -4 | tee $OUT/call5_pytest.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 150 python3 -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md > $OUT/call5_bench.txt 2>&1
echo bench rc=$?; tail -45 $OUT/call5_bench.txt
