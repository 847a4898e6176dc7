cd "$(dirname "$0")/../../.."
OMP_NUM_THREADS=2 python3 -m megatron_qarl.train --device cpu --model qwen3-moe-tiny --seed ${SEED:-1234} \
    --prompt-data synthetic:arithmetic --synthetic-digits 2 --synthetic-num-prompts 4000 \
    --reward arithmetic --tokenizer-type char --prompt-template plain \
    --seq-length 16 --rollout-max-new-tokens 6 --eval-num-prompts 128 --eval-interval 10 \
    --sft-iters ${SFT:-1000} --sft-batch-size 64 --sft-lr ${SFTLR:-3e-3} \
    --rollout-batch-size 16 --n-samples-per-prompt 8 \
    --global-batch-size 128 --micro-batch-size 128 --lr 1e-4 \
    --rollout-quant none --loss grpo --mismatch-correction none --train-iters 0 --no-progress-bar \
    --save "$1" ${EXTRA:-}
python - "$1" <<'PY'
import json, sys
rows=[json.loads(l) for l in open(sys.argv[1] + '/metrics.jsonl')]
sft=[r for r in rows if r['event']=='sft']
print([round(sft[i]['sft_loss'],3) for i in range(0,len(sft),100)], [r for r in rows if r['event']=='eval'][-1]['eval_reward'])
PY
