# session 51, call 4 (.whl carried): the FP8 weight quantizer with a row of blocks on
# neighbouring programs (kernels/fp8_quantize.py): layout_probe.py and the bench's quantize
# section again, the FP8 tests; then the Megatron-layer comparison at this tree
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
R=docs/results/masters_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 60 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_fp8.py \
  tests/kernels/test_expert_masters.py 2>&1 | tail -2 | tee $OUT/call4_pytest.txt
timeout 120 python3 $R/layout_probe.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call4_layout.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call4_bench_quantize.txt
timeout 100 python3 docs/results/swiglu_h200_2026-11-29/layer_times.py none+grouped w4a16 \
  fp8-block int8 2>&1 | grep -v "Warning\|warn" | tee $OUT/call4_layer_times.txt
timeout 150 python3 tools/bench_megatron_layers.py --batch 32 --steps 4 --warmup 2 \
  --tiny-steps 1 --schemes none,w4a16,fp8-block,int8 --grouped-bf16 \
  --out $OUT/call4_megatron_layers_b32.json 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call4_layers_b32.txt
