# Call 3 (nvidia-h200), given inline to the run tool (recorded here after it ran): after call 2
# ran out of its 560 s at 97% of the suite, the tests that build the Megatron models (fp32
# router probs for FP8/INT8 experts), the embedded engine's (CUDA graphs of FP8 models) and the
# router-prob epilogue kernels, at db130ed.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 330 python -m pytest tests/megatron tests/trainer/test_embedded_engine.py \
  tests/kernels/test_router_prob_epilogue.py -q -rf -n 16 --dist worksteal -p no:cacheprovider \
  2>&1 | tail -4 | tee $OUT/call3_subset.txt
