# Call 2 (nvidia-h200): after the trainer (loss reporting, the routers' loss weight), engine
# (last-position logits, finish reason) and checkpoint changes that followed call 1: the test
# folders they touch, on the GPU (kernels unchanged since call 1).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
timeout 330 python -m pytest tests/trainer tests/megatron tests/rl tests/checkpoint -q -n 16 \
  --dist worksteal > $OUT/call2_pytest.txt 2>&1; echo "rc=$? $(( $(date +%s) - start )) s"
tail -4 $OUT/call2_pytest.txt
