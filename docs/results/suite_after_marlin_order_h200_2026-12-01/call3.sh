# Session 71, call 3: fc2's prob epilogue, the shipped register form (kernels/) against session 70
# call 2's shared-memory form (.whl/smem/kernels: kernels/ with _epilogue's prob branch converting
# the fp32 accumulator to the store layout first), twice each, alternating (epilogue_ab.py).
export PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp /tmp/pps && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/smem/kernels /tmp/pps/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=docs/results/suite_after_marlin_order_h200_2026-12-01/epilogue_ab.py
for r in 1 2; do
  PYTHONPATH=/tmp/pp:$PWD:/tmp/site timeout 200 python $S register 2>&1 | tee -a $OUT/epilogue_ab.txt
  PYTHONPATH=/tmp/pps:$PWD:/tmp/site timeout 200 python $S smem 2>&1 | tee -a $OUT/epilogue_ab.txt
done
