# Call 5 (nvidia-h200-x2, as run inline): the same test with a print of the weights that did not
# move from step 1 to step 2 (layer-wise and plain Muon) and of the checkpoint's other keys
# (the print was a local edit of the test, not committed).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1; pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl >/dev/null 2>&1; mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels; timeout 200 python -m pytest -q -s tests/trainer/test_parallel_training.py -k "layer_wise and nccl" -p no:xdist > $OUT/call5_diag.txt 2>&1; echo rc=$?; grep -E "UNMOVED|OTHER" $OUT/call5_diag.txt | cut -c1-3000; tail -1 $OUT/call5_diag.txt
