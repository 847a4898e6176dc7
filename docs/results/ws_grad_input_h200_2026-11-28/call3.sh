# session 42, call 3 (from the repository root, .whl and .gl carried): the forward against
# round 37's kernel in three alternating rounds; cProfile of eager WS calls; the Megatron-layer
# step with the WS grad_input and without, twice each, alternating
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp .gl/w4a16_grouped_ws_r37.py kernels/
d=docs/results/ws_grad_input_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 100 python3 $d/grad_ws.py forward 3 2>&1 | tee $OUT/call3_forward.txt
timeout 60 python3 $d/grad_ws.py host > $OUT/call3_host.txt 2>&1; echo host rc=$?
for i in 1 2; do for m in ws no-ws; do
  timeout 100 python3 $d/layers.py $m --steps 8 --warmup 3 --tiny-steps 1 --schemes w4a16 \
    --out $OUT/megatron_layers_${m}_$i.json > $OUT/call3_layers_${m}_$i.txt 2>&1
  echo $m $i rc=$?; grep "s/step\|calls" $OUT/call3_layers_${m}_$i.txt
done; done
