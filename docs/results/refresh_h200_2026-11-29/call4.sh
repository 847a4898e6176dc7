# session 48, call 4 (from the repository root, .whl carried): the dropless permutation by
# nonzero_static of the known count, on CUDA always (permute_probe.py; the token-dispatch and
# CUDA-graph decode tests; the step A/B `refresh_ab.py permute`); the sync points again
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
R=docs/results/refresh_h200_2026-11-29
timeout 60 python3 $R/permute_probe.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call4_permute.txt
timeout 150 python3 -m pytest -q -n 16 -p no:cacheprovider tests/megatron/test_token_dispatch.py \
  tests/megatron/test_fixed_size_dispatch.py tests/megatron/test_token_combine.py \
  tests/trainer/test_embedded_engine.py tests/megatron/test_build_and_train.py 2>&1 | tail -2 \
  | tee $OUT/call4_pytest.txt
timeout 60 python3 $R/sync_points.py w4a16 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call4_sync_points.txt
timeout 200 python3 $R/refresh_ab.py permute 16 2 w4a16,fp8-block,int8 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call4_permute_30b.txt
