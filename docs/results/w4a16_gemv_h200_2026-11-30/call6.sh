# session 59, this folder's call 6 (the machine still warm): the four tests that were running
# when call 5's 400 s ran out
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -v -W ignore -p no:cacheprovider -n 4 \
  "tests/trainer/test_parallel_training.py::test_layer_wise_distributed_muon_updates_like_muon_and_resumes[gloo]" \
  tests/trainer/test_resume.py::test_corrupted_checkpoint_is_reported_and_nothing_saved_is_lost \
  tests/trainer/test_resume.py::test_kill_and_resume_gives_the_same_batch_and_weights \
  "tests/trainer/test_resume.py::test_muon_trains_and_resumes_with_its_momentum[cuda-bf16]" \
  > $OUT/call6_pytest.txt 2>&1
echo "pytest rc=$?"; tail -3 $OUT/call6_pytest.txt
