export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
[ -d /tmp/site/megatron ] || pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
python .gpu/race_bench.py 2>&1 | grep -v -i warn | tee $OUT/race_bench.txt
