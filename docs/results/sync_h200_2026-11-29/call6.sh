# session 49, call 6 (from the repository root, .whl carried; old_8e64211/ an untracked copy of
# megatron_qarl/, kernels/ and tools/ at 8e64211, session 46's tree, made by
# `git archive 8e64211 megatron_qarl kernels tools | tar -x -C old_8e64211`): why grouped bf16's
# 32 x 1024 step went from 0.195 s (session 46) to 0.144 s (calls 2-3): the layers bench for
# scheme none at both trees, old new new old; then the Megatron and trainer tests at this tree
export PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp /tmp/pp_old && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/old_8e64211/kernels /tmp/pp_old/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
bench() {  # TREE LABEL
  (cd $1 && PYTHONPATH=$3:$PWD:/tmp/site timeout 100 python3 tools/bench_megatron_layers.py \
    --batch 32 --steps 4 --warmup 2 --tiny-steps 1 --schemes none --grouped-bf16 2>&1 \
    | grep "s/step" | sed "s/^/$2: /")
}
for tree in old new new old; do
  if [ $tree = old ]; then bench old_8e64211 "8e64211" /tmp/pp_old; else bench . "HEAD" /tmp/pp; fi
done | tee $OUT/call6_grouped_b32.txt
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site
timeout 330 python3 -m pytest -q -n 16 -p no:cacheprovider tests/megatron tests/trainer 2>&1 \
  | tail -2 | tee $OUT/call6_pytest.txt
