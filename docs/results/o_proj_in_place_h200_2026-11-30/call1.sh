# session 58, call 1 (from the repository root, .whl carried; .whl/kernels_main = kernels/ at
# 3b5b593): o_proj's input read in place (o_proj_probe.py), then tests/kernels
D=docs/results/o_proj_in_place_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call1_gpu.txt
timeout 240 python3 $D/o_proj_probe.py 2>&1 | tee $OUT/call1_probe.txt | grep -v "by round"
timeout 200 python3 -m pytest -v -W ignore -p no:cacheprovider -n 16 tests/kernels > $OUT/call1_kernels.txt 2>&1
echo pytest rc=$?; grep -E "FAIL|ERROR" $OUT/call1_kernels.txt | head; tail -3 $OUT/call1_kernels.txt
