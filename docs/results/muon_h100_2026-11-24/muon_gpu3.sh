export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
[ -d /tmp/site/megatron ] || pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
python .gpu/muon_check.py 2>&1 | grep -v -i "warn" | sed -n '/== 3/,/== 4/p' | tee $OUT/muon_check3.txt
QUANT=0 STEPS=3 TIMEOUT=170 VARIANTS=w4a16-qarl-tbpo examples/qwen3_30b_a3b/bench_reduced.sh $OUT/adam > $OUT/adam.log 2>&1
QUANT=0 STEPS=3 TIMEOUT=170 VARIANTS=w4a16-qarl-tbpo examples/qwen3_30b_a3b/bench_reduced.sh $OUT/muon --optimizer muon --weight-decay 0.01 > $OUT/muon.log 2>&1
for v in adam muon; do echo "== $v"; python - $OUT/$v/w4a16-qarl-tbpo.jsonl <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r.get("event") == "train":
        print(r["step"], {k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()
                          if k.startswith(("time/", "mem/step_start", "mem/train_peak")) or k in ("tokens_per_s", "grad_norm", "mismatch_abs_log_w_token")})
PY
done
