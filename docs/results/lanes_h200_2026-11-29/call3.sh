# session 47, call 3 (from the repository root, .whl carried): 8 rows and one warp a program
# whenever the quantizer writes the lane order (bf16 masters took 3.8-3.9x the time with the
# bf16 default of 32 rows and 4 warps, call 2): its tests; lanes_ab.py with fp32 and bf16
# masters and the training step again (bf16 params, so bf16 masters); session 46's
# host_profile.py for W4A16
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 120 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels/test_w4a16_quantize.py \
  tests/kernels/test_w4a16_lanes.py tests/megatron/test_cache.py 2>&1 | tail -2 \
  | tee $OUT/call3_pytest.txt
timeout 260 python3 docs/results/lanes_h200_2026-11-29/lanes_ab.py 6 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call3_ab.txt
timeout 120 python3 docs/results/layers_h200_2026-11-29/host_profile.py w4a16 2>&1 \
  | grep -v "Warning\|warn" > $OUT/call3_host.txt; head -45 $OUT/call3_host.txt
