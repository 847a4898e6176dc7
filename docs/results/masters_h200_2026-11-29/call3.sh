# session 51, call 3 (.whl carried): the masters' layout against each quantizer's time in place
# (layout_probe.py), then the GPU suite of the Megatron layers and the trainer
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
R=docs/results/masters_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 120 python3 $R/layout_probe.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call3_layout.txt
timeout 420 python3 -m pytest -q -n 16 -p no:cacheprovider tests/megatron tests/trainer 2>&1 \
  | tail -4 | tee $OUT/call3_pytest.txt
