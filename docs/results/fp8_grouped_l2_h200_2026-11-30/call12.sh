# session 56, call 12 (from the repository root, .whl carried): the thread-count tests counted
# after a first call / a first model and given 5 s to settle, after the four files of call 10
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
F=tests/megatron/test_megatron_fixes.py
for f in fused_swiglu keep_operand te_fp8 grouped_bf16_experts; do
  (timeout 100 python3 -m pytest -q -W ignore -p no:cacheprovider tests/megatron/test_$f.py $F 2>&1 \
    | tail -1 | sed "s|^|$f: |") &
done
wait
