# session 47, call 6 (from the repository root, .whl carried): the step A/Bs with the op set in
# qarl_kernels.register (step_ab.py; calls 1 and 3-5 and session 46's call 3 left every arm on
# the default op): the lane order at 2 Qwen3-30B-A3B layers and at qwen3-moe-200m, with the
# kernel profile of the first; session 46's dense STE backward at qwen3-moe-200m
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
R=docs/results/lanes_h200_2026-11-29
timeout 100 python3 $R/lanes_profile.py 2>&1 | grep -v "Warning\|warn" > $OUT/call6_profile.txt
grep "=====\|_w4a16_quantize\|Self CUDA time total" $OUT/call6_profile.txt
timeout 150 python3 $R/step_ab.py lanes 6 2 2>&1 | grep -v "Warning\|warn" | tee $OUT/call6_lanes_30b.txt
timeout 150 python3 $R/step_ab.py lanes 6 2>&1 | grep -v "Warning\|warn" | tee $OUT/call6_lanes_200m.txt
timeout 240 python3 $R/step_ab.py dense-backward 4 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call6_dense_backward.txt
