# Call 1 (nvidia-h200): session 80's new tests on the GPU. The kernel review's test files
# (int8_gemm / fp8_gemm / expert_tiles: store masks, prob order, split-K slots, packed FP8 rows)
# on the compiled kernels, where split-K's programs run concurrently; the lr schedule's tests,
# and the Muon resume under a warm-up + cosine schedule in bf16 on the GPU (plain and inside
# Megatron's layer-wise distributed optimizer), bit for bit against the uninterrupted run.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
KERNELS="tests/kernels/test_int8.py tests/kernels/test_split_k.py tests/kernels/test_fp8.py tests/kernels/test_expert_tiles.py tests/kernels/test_routed_rows.py"
timeout 420 python -m pytest $KERNELS -q -rfs -n 8 -p no:cacheprovider 2>&1 | tail -8 | tee $OUT/kernel_tests.txt &
timeout 420 python -m pytest tests/megatron/test_lr_schedule.py "tests/trainer/test_resume.py::test_muon_trains_and_resumes_with_its_momentum" \
  -q -rfs -p no:cacheprovider 2>&1 | tail -8 | tee $OUT/lr_schedule_tests.txt &
wait; date -u
