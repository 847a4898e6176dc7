# Call 2 (nvidia-h200-x2): the tests that need two GPUs, after this session's engine change
# (under sequence parallelism the prompt window is cut to a multiple of the TP size and makes
# its last position's logits only; the decode graphs then make all of their TP positions'),
# the routers' padding mask and the whole-mini-batch diagnostics. Three xdist workers: each
# test spawns its own 2 processes on the 2 GPUs (tiny models).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name --format=csv,noheader; date -u
start=$(date +%s)
timeout 540 python -m pytest -v -rf tests/trainer -k "nccl or two_gpu or under_parallelism" \
  -n 3 --dist worksteal > $OUT/call2_pytest.txt 2>&1; echo "rc=$? $(( $(date +%s) - start )) s"
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/call2_pytest.txt | cut -c1-150; tail -1 $OUT/call2_pytest.txt
