# Call 1 (nvidia-h200): the three GPU-only tools before (84258ef, carried as .whl/before/tools)
# and after cc64500 moved their arithmetic into plain functions (mean_step_s, decode_step_ms,
# per_step_profile, median, project). Same printed text with digits masked; each run's figures
# checked against one another (check_tools.py).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for side in before after; do
  if [ $side = before ]; then T=.whl/before/tools; else T=tools; fi
  timeout 150 python $T/bench_megatron_layers.py --preset qwen3-moe-tiny --schemes none,w4a16 \
    --batch 2 --seq 128 --steps 3 --warmup 2 --tiny-steps 2 --out $OUT/layers_$side.json 2>&1 \
    | grep -v "Warning\|warn" > $OUT/layers_$side.txt; echo "layers $side rc ${PIPESTATUS[0]}"
  timeout 150 python $T/profile_embedded_decode.py --layers 1 --batch 8 --new-tokens 32 \
    --warmup-tokens 8 --top 5 > $OUT/decode_$side.txt 2>&1; echo "decode $side rc $?"
  timeout 150 python $T/bench_rl_phases.py quantize --layers 2 --repeats 4 \
    --json $OUT/quantize_$side.json > $OUT/quantize_$side.txt 2>&1; echo "quantize $side rc $?"
done
python docs/results/gpu_tools_h200_2026-12-02/check_tools.py $OUT 2>&1 | tee $OUT/check.txt; date -u
