# session 56, call 8 (from the repository root, .whl carried): which gloo groups init_parallel
# leaves alive on the GPU machine (call 7's failure: 42 communication threads against 38)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
timeout 120 python3 docs/results/fp8_grouped_l2_h200_2026-11-30/groups_probe.py 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call8_groups.txt
