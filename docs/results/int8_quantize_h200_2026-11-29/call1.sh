# session 53, call 1: the INT8 row quantizer counting NaN/inf only where a row's amax says so
# and without its clamp: its GPU tests, old (624b5f4) against new, the bench's quantize
# section, and the Megatron-layer step of w4a16 and int8 with a profile
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/int8_quantize_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/call1_gpu.txt
timeout 120 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py \
  tests/kernels/test_nonfinite_count.py tests/kernels/test_expert_masters.py \
  tests/kernels/test_swiglu_experts.py 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -8 | tee $OUT/call1_pytest.txt
timeout 150 python3 $R/int8_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call1_int8_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | grep "^|" > $OUT/call1_bench_quantize.txt
timeout 200 python3 tools/bench_megatron_layers.py --batch 32 --steps 10 --warmup 3 \
  --tiny-steps 1 --schemes w4a16,int8 --profile 2 \
  --out $OUT/call1_megatron_layers_b32.json 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call1_layers_b32.txt
