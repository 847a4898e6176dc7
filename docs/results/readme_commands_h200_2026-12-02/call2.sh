# Call 2 (nvidia-h200): call 1's tiny example ended its warm start on the SFT plateau (held-out
# 0.273; the H200 gave 0.938-0.945 on 2026-11-30, before the routers' padding mask and the
# held-out split of 2026-12-01, tuned on the CPU only). Eleven warm starts at once (the example's
# phase 1 alone: --train-iters 0), each its own SAVE: the example as it is (twice: is the GPU
# run repeatable?), other seeds, lower lr, more steps, no load-balancing loss, a larger batch,
# weight decay.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
run() {  # name, flags...
  local name=$1; shift
  SAVE=/tmp/ws/$name timeout 500 bash examples/tiny/train.sh gpu --train-iters 0 --no-progress-bar "$@" \
    > $OUT/ws_$name.txt 2>&1
  echo "$name ($*): rc $? $(grep -o 'warm start only: reward.*' $OUT/ws_$name.txt)"
}
run default & run default_again & run seed1235 --seed 1235 & run seed1236 --seed 1236 &
run lr1e-3 --sft-lr 1e-3 & run lr1e-3_2000 --sft-lr 1e-3 --sft-iters 2000 &
run no_aux --moe-aux-loss-coeff 0 & run batch128 --sft-batch-size 128 &
run lr1e-3_seed1235 --sft-lr 1e-3 --seed 1235 &
run wd0.1 --weight-decay 0.1 & run wd0.1_seed1235 --weight-decay 0.1 --seed 1235 &
wait; date -u
for f in /tmp/ws/*/warm-start/metrics.jsonl; do
  n=$(basename $(dirname $(dirname $f)))
  echo "$n: $(python3 -c "
import json,sys
r=[json.loads(l) for l in open('$f')]
s=[x['sft_loss'] for x in r if x['event']=='sft']
print(' '.join(f'{v:.3f}' for v in s[::100]), '| last', f'{s[-1]:.3f}')")"
done | tee $OUT/sft_losses.txt
