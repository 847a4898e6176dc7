# session 56, call 9 (from the repository root, .whl carried): the thread-count tests alone, then
# after each other Megatron-layer test file in one process (which file leaves a group behind)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
F=tests/megatron/test_megatron_fixes.py
timeout 60 python3 -m pytest -q -W ignore -p no:cacheprovider $F 2>&1 | tail -1 | sed 's/^/alone: /'
for f in tests/megatron/test_*.py; do
  [ $f = $F ] && continue
  (timeout 100 python3 -m pytest -q -W ignore -p no:cacheprovider $f $F 2>&1 | tail -1 | sed "s|^|$f: |") &
done
wait
