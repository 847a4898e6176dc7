# session 47, call 9 (from the repository root, .whl carried): FP8's weight quantizer carries a
# block's NaN/inf into its scale (max.NaN) and the wrapper checks the scales (calls 7-8's
# in-kernel counts cost the kernel 1.25-1.34x): its tests, finite_check.py, `bench --only quantize`
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 80 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels/test_fp8.py \
  tests/kernels/test_routed_rows.py 2>&1 | tail -2 | tee $OUT/call9_pytest.txt
timeout 40 python3 docs/results/lanes_h200_2026-11-29/finite_check.py 2>&1 | tee $OUT/call9_finite.txt
cp docs/benchmarks.md $OUT/
timeout 90 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | tee $OUT/call9_quantize.txt | tail -14
