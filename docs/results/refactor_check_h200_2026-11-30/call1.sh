# Call 1 (nvidia-h200): the GPU suite after the split of w4a16_gemm's Gluon rules and of the
# benchmark into a package, and the NCCL device binding's test failing without the binding.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$(date +%s)
timeout 470 python -m pytest tests -q -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  > $OUT/call1_pytest.txt 2>&1; echo "suite rc=$? $(( $(date +%s) - start )) s"; tail -3 $OUT/call1_pytest.txt
# without the binding the new test must fail (torch's warning at the save)
patch -s -p1 -R < .whl/bind.patch && timeout 90 python -m pytest -q tests/trainer/test_resume.py \
  -k nccl_saves > $OUT/call1_unbound.txt 2>&1; echo "unbound rc=$?"; tail -2 $OUT/call1_unbound.txt
patch -s -p1 < .whl/bind.patch
