# Call 2 (nvidia-h200): call 1 again with 14 processes (its 20 ran out of the H200's memory at
# 6-7.7 GiB each: 18 of them failed). Does a warm-up + cosine schedule for the tiny example's warm start
# (0464950's --sft-lr-warmup-iters / --sft-lr-decay-style / --sft-min-lr) leave the SFT plateau
# in fewer steps or at more seeds than the example's 1500 constant steps at 2e-3? Warm starts
# only (`--train-iters 0`), seeds 1234-1239, held-out greedy reward after each.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
run() {  # name, flags...
  local name=$1; shift
  SAVE=/tmp/ws/$name timeout 520 bash examples/tiny/train.sh gpu --train-iters 0 --no-progress-bar "$@" \
    > /tmp/ws_$name.txt 2>&1
  echo "$name ($*): rc $? $(grep -m1 -o 'warm start only: reward.*' /tmp/ws_$name.txt)"
}
rm -rf /tmp/ws
COS="--sft-lr-warmup-iters 100 --sft-lr-decay-style cosine --sft-min-lr 1e-4"
for s in 1238 1239; do run const2e-3_it1500_s$s --seed $s & done   # 1234-1237: call 3 of readme_commands
for s in 1234 1235 1236 1237 1238 1239; do
  run cos2e-3_it1000_s$s --sft-iters 1000 $COS --seed $s &
  run cos4e-3_it1000_s$s --sft-iters 1000 --sft-lr 4e-3 $COS --seed $s &
done
wait; date -u
for f in /tmp/ws/*/warm-start/metrics.jsonl; do
  n=$(basename $(dirname $(dirname $f)))
  echo "$n: $(python3 -c "
import json
r=[json.loads(l) for l in open('$f')]
s=[x for x in r if x['event']=='sft']
print(' '.join(f\"{x['sft_loss']:.3f}\" for x in s[::250]), '| last', f\"{s[-1]['sft_loss']:.3f}\",
      '| lr', ' '.join(f\"{x['lr']:.2g}\" for x in s[::250]))")"
done | tee $OUT/sft_losses.txt
