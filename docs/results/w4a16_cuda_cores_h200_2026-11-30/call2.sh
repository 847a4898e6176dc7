# session 58, this folder's call 2 (from the repository root, .whl carried): one token,
# K steps up to 2048 inputs (one_step_probe.py)
D=docs/results/w4a16_cuda_cores_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 400 python3 $D/one_step_probe.py 2>&1 | tee $OUT/call2_probe.txt
