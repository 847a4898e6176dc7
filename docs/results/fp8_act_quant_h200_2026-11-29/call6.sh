# session 54, call 6 (call 5's tree): the FP8 ops with the quantizer in the call, old against
# new beside bf16 (seven rounds); the Megatron-layer step, FP8 with this tree's kernels and
# with round 49's (the qarl_kernels link swapped), A B A B, and grouped bf16
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_old
R=docs/results/fp8_act_quant_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call6_gpu.txt
timeout 170 python3 $R/fp8_op_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call6_fp8_op_ab.txt
layers() {  # $1: tag, $2: schemes, $3: extra flag
  timeout 100 python3 tools/bench_megatron_layers.py --batch 32 --steps 10 --warmup 3 \
    --tiny-steps 1 --schemes $2 $3 --out $OUT/call6_layers_$1.json 2>&1 \
    | grep -v "Warning\|warn" | grep "s/step" | sed "s/^/$1: /" | tee -a $OUT/call6_layers_b32.txt
}
layers new1 fp8-block --grouped-bf16
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels; layers old1 fp8-block
ln -sfn $PWD/kernels /tmp/pp/qarl_kernels; layers new2 fp8-block
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels; layers old2 fp8-block
