# session 53, call 5 (as call 1, at e77c556's kernels): call 4's old-against-new in CUDA
# graphs, which timed out building graphs over 65536 copies of a one-token input, with at
# most 8 copies of an input
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/int8_quantize_h200_2026-11-29
timeout 250 python3 $R/int8_graph_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call5_int8_graph_ab.txt
