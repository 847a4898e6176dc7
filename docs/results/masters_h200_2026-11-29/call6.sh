# session 51, call 6 (.whl carried): torch's fused AdamW where Megatron falls back to torch's
# (megatron_qarl/compat/fused_torch_adam.py, taken by the trainer's build_optimizer): the
# optimizer step timed both ways, then the trainer's GPU tests through it
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
R=docs/results/masters_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 100 python3 $R/adam_step.py 5 w4a16 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call6_adam_step.txt
timeout 270 python3 -m pytest -q -n 16 -p no:cacheprovider tests/trainer \
  tests/megatron/test_fused_torch_adam.py tests/megatron/test_muon.py 2>&1 | tail -4 \
  | tee $OUT/call6_pytest.txt
