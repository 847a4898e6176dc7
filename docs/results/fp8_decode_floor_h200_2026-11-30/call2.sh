# session 61, this folder's call 2 (.whl carried): stage_sweep.py (the FP8/INT8 dense kernels'
# num_stages 2-8 and 4/8 warps at the rule's tiles and K split and twice it, 1-512 tokens)
D=docs/results/fp8_decode_floor_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 540 python3 $D/stage_sweep.py 3 2>&1 | tee $OUT/call2_stages.txt | grep -v "^skipped"
