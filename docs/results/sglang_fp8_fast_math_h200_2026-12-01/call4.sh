# Call 4 (nvidia-h200): quantizer_ab.py again (call 3's timed out making thousands of copies
# of the 1-row inputs); kernels/fp8_quantize_before.py in the tree as for call 3.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1 D=docs/results/sglang_fp8_fast_math_h200_2026-12-01
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 300 python3 $D/quantizer_ab.py 2>&1 | grep -v -i warn | tee $OUT/call4_quantizer_ab.txt
