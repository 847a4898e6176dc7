# session 49, call 3 (from the repository root, .whl carried): the layers bench again with the
# refresh group held by weak references (fb81b32): peaks back at session 46's if the cycle was
# what raised call 2's; the cache tests on the GPU
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 -m pytest -q -n 8 -p no:warnings tests/megatron/test_cache.py \
  tests/trainer/test_bench_rl_phases.py 2>&1 | tail -2 | tee $OUT/call3_pytest.txt
timeout 200 python3 tools/bench_megatron_layers.py --steps 8 --warmup 3 --tiny-steps 8 \
  --schemes none,w4a16,fp8-block,int8 --grouped-bf16 \
  --out $OUT/call3_megatron_layers_b4.json > $OUT/call3_layers_b4.txt 2>&1; echo b4 rc=$?
grep "s/step\|tiny\|failed" $OUT/call3_layers_b4.txt
timeout 230 python3 tools/bench_megatron_layers.py --batch 32 --steps 4 --warmup 2 \
  --tiny-steps 1 --schemes none,w4a16,fp8-block,int8 --grouped-bf16 \
  --out $OUT/call3_megatron_layers_b32.json > $OUT/call3_layers_b32.txt 2>&1; echo b32 rc=$?
grep "s/step\|failed" $OUT/call3_layers_b32.txt
