# session 58, this folder's call 3 (from the repository root, .whl carried; .whl/kernels_main =
# kernels/ at 3b5b593): one-token dense calls routed to the CUDA-core products, A/B
# (route_ab.py); then the GPU suite but the SGLang bridge's, with work stealing
D=docs/results/w4a16_cuda_cores_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 100 python3 $D/route_ab.py 2>&1 | tee $OUT/call3_ab.txt | grep -v "by round"
start=$(date +%s)
timeout 470 python3 -m pytest -v -W ignore -p no:cacheprovider -n 16 --dist worksteal tests \
  --ignore=tests/rollout_sglang > $OUT/call3_pytest.txt 2>&1
echo "pytest rc=$? in $(( $(date +%s) - start )) s"
grep -E "^(FAILED|ERROR)" $OUT/call3_pytest.txt | head; tail -3 $OUT/call3_pytest.txt
