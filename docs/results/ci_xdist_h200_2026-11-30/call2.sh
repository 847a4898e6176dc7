# session 55, call 2 (tree 1d75508): README's test command with -n 8 on the GPU machine, every folder but tests/kernels and tests/rollout_sglang (its fixture installs SGLang from PyPI)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/call2_gpu.txt
python3 -c "import torch, triton, xdist; print(torch.__version__, triton.__version__, xdist.__version__)" | tee -a $OUT/call2_gpu.txt
start=$(date +%s)
timeout 540 python3 -m pytest tests/checkpoint tests/megatron tests/quant tests/rl tests/trainer -q -n 8 --dist loadfile -p no:cacheprovider 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -12 | tee $OUT/call2_pytest.txt
echo "wall $(( $(date +%s) - start )) s" | tee -a $OUT/call2_pytest.txt
