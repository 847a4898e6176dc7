# session 46, call 1 (from the repository root, .whl carried): the FP8 activation quantizer's
# rows a program x warps with the e4m3 rounding in hardware (quant_tiles.py); the Megatron-layer
# step of every scheme with the kernels of cfaac26, each profiled for two more steps
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 120 python3 docs/results/layers_h200_2026-11-29/quant_tiles.py 2>&1 | tee $OUT/call1_tiles.txt
timeout 360 python3 tools/bench_megatron_layers.py --steps 8 --warmup 3 --tiny-steps 8 \
  --schemes none,w4a16,fp8-block,int8 --grouped-bf16 --profile 2 \
  --out $OUT/megatron_layers.json > $OUT/call1_layers.txt 2>&1; echo layers rc=$?
grep -v Warning $OUT/call1_layers.txt | grep -v "warnings.warn" | grep "s/step\|tiny\|failed"
