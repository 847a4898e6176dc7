export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | grep -v WARN
mkdir -p /tmp/pp /tmp/ppexp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.gpu/exp/kernels /tmp/ppexp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_w4a16_gluon_dense.py tests/kernels/test_w4a16_gluon.py tests/kernels/test_split_k.py tests/kernels/test_w4a16_gemm.py -W ignore 2>&1 | tail -8 | tee $OUT/tests.txt
for tag in base exp; do
  case $tag in exp*) P=/tmp/ppexp;; *) P=/tmp/pp;; esac
  PYTHONPATH=$P:$PWD:/tmp/site timeout 170 python3 .gpu/split_layout_ab.py $tag 2>&1 | grep "^$tag," >> $OUT/ab.csv
done
python3 - <<'PY'
import collections, os
rows=[l.strip().split(",") for l in open(os.environ["OUT"]+"/ab.csv")]
t=collections.defaultdict(list)
for r in rows:
    key=",".join(r[1:-3]); t[(key, r[-3])].append((r[0], float(r[-2])))
for (key, rule), v in t.items():
    d=dict(v); b=min(d.get("base",99), d.get("base2",99)); e=min(d.get("exp",99), d.get("exp2",99))
    print(f"{key:50s} {rule:4s} base {b:6.2f} exp {e:6.2f} {b/e:5.2f}x")
PY
