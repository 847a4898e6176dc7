# session 50, call 7 (from the repository root, .whl carried): scheme 'none''s one-pass copy
# and NaN/inf count of the experts (kernels/bf16_quantize.py): its GPU tests and a step A/B
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_bf16_quantize.py \
  tests/kernels/test_register.py 2>&1 | tail -2 | tee $OUT/call7_pytest.txt
timeout 200 python3 docs/results/swiglu_h200_2026-11-29/bf16_check_ab.py 4 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call7_ab.txt
