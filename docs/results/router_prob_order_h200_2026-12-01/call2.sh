# Session 69, call 2: the kernel tests call 1 found stale (compile specs, a CPU tensor), the new
# epilogue tests, and the Megatron-layer step time before (ab7c118) and after, interleaved twice
# (call 1's single pair moved rows by up to 15% both ways).
set -x
export PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl
mkdir -p /tmp/pp /tmp/ppb && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels \
  && ln -sfn $PWD/.whl/before/kernels /tmp/ppb/qarl_kernels
NEW=/tmp/pp:$PWD:/tmp/site
OLD=/tmp/ppb:$PWD/.whl/before:/tmp/site
PYTHONPATH=$NEW timeout 200 python -m pytest -q -rf -n 16 -p no:cacheprovider \
  tests/kernels/test_launch_cache.py tests/kernels/test_expert_masters.py \
  tests/kernels/test_swiglu_training.py tests/kernels/test_router_prob_epilogue.py \
  tests/kernels/test_w4a16_gluon.py tests/kernels/test_w4a16_grouped_ws.py \
  tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_moe_backward.py \
  > $OUT/kernel_tests.txt 2>&1; tail -5 $OUT/kernel_tests.txt
for run in 1 2; do
  for side in before after; do
    if [ $side = before ]; then P=$OLD; T=.whl/before/tools; else P=$NEW; T=tools; fi
    PYTHONPATH=$P timeout 150 python $T/bench_megatron_layers.py --steps 10 --warmup 3 \
      --tiny-steps 2 --schemes w4a16,fp8-block,int8 --keep-operand \
      --out $OUT/layers_${side}_$run.json > $OUT/layers_${side}_$run.txt 2>&1
    grep triton $OUT/layers_${side}_$run.txt
  done
done
