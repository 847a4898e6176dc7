# session 57, call 3 (from the repository root, .whl carried): the one failure call 2 named,
# alone with its traceback; tests/kernels one line a test (call 1's second failure); the test
# still running when call 2 ran out, alone and timed
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 120 python3 -m pytest -q -W ignore -p no:cacheprovider \
  tests/checkpoint/test_quantized_export.py::test_w4a16_export_loads_in_transformers_with_the_aligned_logits \
  > $OUT/call3_export.txt 2>&1
echo export rc=$?; grep -E "^E |passed|failed" $OUT/call3_export.txt | head -30
timeout 200 python3 -m pytest -v -rfE -W ignore -p no:cacheprovider -n 16 tests/kernels > $OUT/call3_kernels.txt 2>&1
echo kernels rc=$?; grep -E "FAILED|ERROR" $OUT/call3_kernels.txt | head; tail -2 $OUT/call3_kernels.txt
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider --durations=1 \
  tests/trainer/test_resume.py::test_corrupted_checkpoint_is_reported_and_nothing_saved_is_lost > $OUT/call3_resume.txt 2>&1
echo resume rc=$?; tail -4 $OUT/call3_resume.txt
