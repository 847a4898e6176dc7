# Call 1 (nvidia-h200): the FP8 activation quantizer with cache hints (hints_ab.py), then the
# FP8 kernel tests on the unchanged tree.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1 D=docs/results/fp8_quantizer_cache_hints_h200_2026-12-02
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 420 python3 $D/hints_ab.py 2>&1 | grep -v -i warn | tee $OUT/call1_hints_ab.txt
