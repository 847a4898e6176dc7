# Session 69, call 1: the router prob in fc2's epilogue (SGLang's order) on the GPU.
# 1. the kernel tests (the new epilogue tests of the Hopper kernels run only here);
# 2. the experts block and the training SwiGLU, before (ab7c118, carried as .whl/before) and after;
# 3. the Megatron-layer step time, before and after.
set -x
export PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl
mkdir -p /tmp/pp /tmp/ppb && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels \
  && ln -sfn $PWD/.whl/before/kernels /tmp/ppb/qarl_kernels
NEW=/tmp/pp:$PWD:/tmp/site
OLD=/tmp/ppb:$PWD/.whl/before:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv
PYTHONPATH=$NEW timeout 240 python -m pytest tests/kernels -q -rf -n 16 -p no:cacheprovider \
  > $OUT/kernel_tests.txt 2>&1; tail -5 $OUT/kernel_tests.txt
(cd .whl/before && PYTHONPATH=$OLD timeout 150 python -m qarl_kernels.bench --only experts \
  --doc $OUT/experts_before.md > $OUT/experts_before.txt 2>&1); tail -3 $OUT/experts_before.txt
PYTHONPATH=$NEW timeout 180 python -m qarl_kernels.bench --only experts --only training \
  --doc $OUT/experts_after.md > $OUT/experts_after.txt 2>&1; tail -3 $OUT/experts_after.txt
for side in before after; do
  if [ $side = before ]; then P=$OLD; T=.whl/before/tools; else P=$NEW; T=tools; fi
  PYTHONPATH=$P timeout 170 python $T/bench_megatron_layers.py --steps 10 --warmup 3 --tiny-steps 8 \
    --schemes w4a16,fp8-block,int8 --keep-operand --out $OUT/layers_$side.json \
    > $OUT/layers_$side.txt 2>&1; tail -12 $OUT/layers_$side.txt
done
