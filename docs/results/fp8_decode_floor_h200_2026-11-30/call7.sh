# session 61, this folder's calls 7-9 from the repository root, .whl carried. This file is
# call 9: `pytest tests/kernels` with the tolerance of cuBLAS's FP8 path (its first try ran on a
# fresh machine without the wheels installed: ImportError, not counted). Calls 7 and 8, after
# call 6's two failures, ran with the same set-up (the lines before pytest) and no log kept but
# the tail the run tool printed:
#   call 7: python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_fp8.py
#           tests/kernels/test_int8.py -rf | grep -E "Error|error|assert|Mismatch|FAILED|passed"
#   call 8: python3 -m pytest -q -W ignore -p no:cacheprovider tests/kernels/test_fp8.py
#           -k "dense_matches_reference and 300" | grep -E "Greatest|Mismatch|passed|failed",
#           then a few lines of Python printing fp8_block_linear's largest difference from
#           scheme.reference_matmul for 300 tokens at (256, 384), (128, 512) and (2048, 4096)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels -rf 2>&1 | tail -4
