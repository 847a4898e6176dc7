# Session 71, call 5: W2 at EP8 about 128 rows an expert, three routings, tiles x both epilogues,
# with and without probs (epilogue_tiles.py ... confirm).
export PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp /tmp/pps && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/smem/kernels /tmp/pps/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=docs/results/suite_after_marlin_order_h200_2026-12-01/epilogue_tiles.py
PYTHONPATH=/tmp/pp:$PWD:/tmp/site timeout 250 python $S register confirm 2>&1 | tee -a $OUT/epilogue_confirm.txt
PYTHONPATH=/tmp/pps:$PWD:/tmp/site timeout 250 python $S smem confirm 2>&1 | tee -a $OUT/epilogue_confirm.txt
