# session 46, call 6 (from the repository root, .whl carried): cProfile of the layer step's
# host time (host_profile.py)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 docs/results/layers_h200_2026-11-29/host_profile.py w4a16 none+grouped \
  > $OUT/call6_host.txt 2>&1; echo rc=$?
grep -A32 "=====\|function calls" $OUT/call6_host.txt | grep -v "^\s*$" | cut -c1-150 | head -80
