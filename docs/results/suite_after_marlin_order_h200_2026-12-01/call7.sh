# Session 71, call 7: the trainer and objectives tests on one GPU after the step's diagnostics
# moved to numerics.reduced_over (masked max/min through one stacked reduction, the rl_step
# merge) and the SGLang retry change; the Gluon rules tests.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 300 python -m pytest tests/trainer tests/rl tests/kernels/test_w4a16_gluon_rules.py -q -rf \
  -n 16 --dist worksteal -p no:cacheprovider > $OUT/pytest.txt 2>&1
tail -8 $OUT/pytest.txt
