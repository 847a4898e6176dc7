# session 41, call 6 (from the repository root, .whl carried): the Megatron-layer step times
# with the WS kernel routed (as committed) and without it, in one lease
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_profile_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 260 python3 $d/call6_layers.py ws --steps 8 --warmup 3 --tiny-steps 8 \
  --schemes none,w4a16 --grouped-bf16 --keep-operand --out $OUT/megatron_layers_ws.json \
  > $OUT/layers_ws.txt 2>&1; echo ws rc=$?; tail -14 $OUT/layers_ws.txt
timeout 200 python3 $d/call6_layers.py no-ws --steps 8 --warmup 3 --tiny-steps 1 \
  --schemes w4a16 --out $OUT/megatron_layers_no_ws.json > $OUT/layers_no_ws.txt 2>&1
echo no-ws rc=$?; tail -8 $OUT/layers_no_ws.txt
