# session 42, call 2 (from the repository root, .whl and .gl carried): GPU tests of the WS
# kernel and the backward that routes to it, the Megatron layers; the forward against round
# 37's kernel with the epilogue's indices hoisted again; host launch cost at EP8; the
# Megatron-layer step times with the WS grad_input and without
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp .gl/w4a16_grouped_ws_r37.py kernels/
d=docs/results/ws_grad_input_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 240 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 \
  tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_moe_backward.py \
  tests/kernels/test_w4a16_operand.py tests/kernels/test_register.py tests/megatron \
  > $OUT/call2_pytest.txt 2>&1; echo pytest rc=$?; tail -4 $OUT/call2_pytest.txt
timeout 60 python3 $d/grad_ws.py forward 2>&1 | tee $OUT/call2_forward.txt
timeout 60 python3 $d/grad_ws.py launch 2>&1 | tee $OUT/call2_launch.txt
timeout 150 python3 $d/layers.py ws --steps 8 --warmup 3 --tiny-steps 1 \
  --schemes none,w4a16 --grouped-bf16 --out $OUT/megatron_layers_ws.json \
  > $OUT/call2_layers_ws.txt 2>&1; echo ws rc=$?; tail -10 $OUT/call2_layers_ws.txt
timeout 100 python3 $d/layers.py no-ws --steps 8 --warmup 3 --tiny-steps 1 \
  --schemes w4a16 --out $OUT/megatron_layers_no_ws.json > $OUT/call2_layers_no_ws.txt 2>&1
echo no-ws rc=$?; tail -6 $OUT/call2_layers_no_ws.txt
