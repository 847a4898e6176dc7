# session 58, this folder's call 4 (from the repository root, .whl carried, the machine still
# warm from call 3): the two tests call 3's suite left running at its timeout
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site; mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels; timeout 190 python3 -m pytest -v -W ignore -p no:cacheprovider -n 2 "tests/trainer/test_resume.py::test_kill_and_resume_gives_the_same_batch_and_weights" "tests/trainer/test_resume.py::test_muon_trains_and_resumes_with_its_momentum[cuda-bf16-layer-wise]" 2>&1 | tail -5 | tee $OUT/call4_resume.txt
