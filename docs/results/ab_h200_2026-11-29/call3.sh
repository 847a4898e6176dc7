# session 45, call 3 (from the repository root, .whl carried; fp8_before.py, fp8_inloop.py and
# ws_before.py beside this script): call 2's failing test alone as it was (expected to fail:
# its cold capture runs before any call made the K split's counters) and as fixed; the tests
# of the kernels whose SM count now comes from gluon_hopper; the FP8 A/B at EP8 with more
# repeats; the Megatron-layer step times of every scheme
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/docs/results/ab_h200_2026-11-29 PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
t=tests/kernels/test_w4a16_gluon_dense.py
sed '/^    split_k.split_ring(x.device)$/d' $t > tests/kernels/test_unfixed_tmp.py
for f in tests/kernels/test_unfixed_tmp.py $t; do
  timeout 90 python3 -m pytest -q -p no:warnings $f -k graphs_take_it 2>&1 | tail -3
done | tee $OUT/call3_flake.txt
rm tests/kernels/test_unfixed_tmp.py
timeout 120 python3 -m pytest -q -n 8 -p no:warnings tests/kernels/test_split_k.py \
  tests/kernels/test_race_argmax.py $t 2>&1 | tail -2 | tee $OUT/call3_pytest.txt
timeout 140 python3 docs/results/ab_h200_2026-11-29/ab.py fp8 6 "W13 EP8" "W2 EP8" 2>&1 \
  | tee $OUT/call3_fp8.txt
timeout 330 python3 tools/bench_megatron_layers.py --steps 8 --warmup 3 --tiny-steps 8 \
  --schemes none,w4a16,fp8-block,int8 --grouped-bf16 --keep-operand \
  --out $OUT/megatron_layers.json > $OUT/call3_layers.txt 2>&1; echo layers rc=$?
grep -v Warning $OUT/call3_layers.txt | grep -v "warnings.warn" | tail -16
