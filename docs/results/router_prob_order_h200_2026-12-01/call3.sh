# Session 69, call 3: the training step of 2 exact Qwen3-30B-A3B layers (8 x 1024 tokens, sdpa;
# session 50's layer_times.py, each scheme twice a process) before (ab7c118) and after: the
# 200M model of calls 1-2 is host-bound at 4 x 1024 tokens, its rows spread 0.096-0.154 s.
export PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp /tmp/ppb && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels \
  && ln -sfn $PWD/.whl/before/kernels /tmp/ppb/qarl_kernels
for side in before after; do
  if [ $side = before ]; then P=/tmp/ppb:$PWD/.whl/before:/tmp/site; else P=/tmp/pp:$PWD:/tmp/site; fi
  echo "== $side"
  PYTHONPATH=$P timeout 200 python docs/results/swiglu_h200_2026-11-29/layer_times.py w4a16 \
    fp8-block int8 2>&1 | grep "=====" | tee $OUT/layer_times_$side.txt
done
