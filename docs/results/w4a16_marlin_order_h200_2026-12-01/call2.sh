# Session 70, call 2: W4A16's fc2 in Marlin's order (the rounded output times the bf16 prob),
# the Gluon epilogue taking the fp32 accumulator out of the wgmma registers first.
# 1. the kernel and quant tests (the capped grids, tails and stages of session 69's call 5);
# 2. the experts block before (3b2a6ae, carried as .whl/before) and after;
# 3. the training step of 2 exact Qwen3-30B-A3B layers, W4A16, before and after, twice each.
export PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp /tmp/ppb && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels \
  && ln -sfn $PWD/.whl/before/kernels /tmp/ppb/qarl_kernels
NEW=/tmp/pp:$PWD:/tmp/site
OLD=/tmp/ppb:$PWD/.whl/before:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PYTHONPATH=$NEW timeout 200 python -m pytest tests/kernels tests/quant -q -rf -n 16 \
  -p no:cacheprovider > $OUT/kernel_tests.txt 2>&1; tail -8 $OUT/kernel_tests.txt
PYTHONPATH=$NEW timeout 110 python -m qarl_kernels.bench --only experts \
  --doc $OUT/experts_after.md > $OUT/experts_after.txt 2>&1
grep -E "^\| (E128|EP8)|MISMATCH|cases passed" $OUT/experts_after.md; tail -2 $OUT/experts_after.txt
(cd .whl/before && PYTHONPATH=$OLD timeout 110 python -m qarl_kernels.bench --only experts \
  --doc $OUT/experts_before.md > $OUT/experts_before.txt 2>&1)
grep -E "^\| (E128|EP8)|MISMATCH|cases passed" $OUT/experts_before.md; tail -2 $OUT/experts_before.txt
for side in before after before after; do
  if [ $side = before ]; then P=$OLD; else P=$NEW; fi
  echo "== $side"
  PYTHONPATH=$P timeout 60 python docs/results/swiglu_h200_2026-11-29/layer_times.py w4a16 2>&1 \
    | grep "=====" | tee -a $OUT/layer_times_$side.txt
done
