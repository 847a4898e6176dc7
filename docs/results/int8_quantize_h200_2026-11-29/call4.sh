# session 53, call 4 (as call 1): the INT8 quantizer's final block rule (masters' rows in
# unmasked blocks of up to 1024 values): its GPU tests, old against new in CUDA graphs, the
# bench's quantize section, and the Megatron-layer step of w4a16, int8 and grouped bf16
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/int8_quantize_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/call4_gpu.txt
timeout 120 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py \
  tests/kernels/test_nonfinite_count.py tests/kernels/test_expert_masters.py \
  tests/kernels/test_swiglu_experts.py 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -8 | tee $OUT/call4_pytest.txt
timeout 200 python3 $R/int8_graph_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call4_int8_graph_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | grep "^|" > $OUT/call4_bench_quantize.txt
timeout 200 python3 tools/bench_megatron_layers.py --batch 32 --steps 10 --warmup 3 \
  --tiny-steps 1 --schemes w4a16,int8 --grouped-bf16 \
  --out $OUT/call4_megatron_layers_b32.json 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call4_layers_b32.txt
