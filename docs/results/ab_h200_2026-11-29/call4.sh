# session 45, call 4 (from the repository root, .whl carried): call 3's failures of the test
# as it was, in full: the four tests together, then each alone in its own process
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
u=tests/kernels/test_unfixed_tmp.py
sed '/^    split_k.split_ring(x.device)$/d' tests/kernels/test_w4a16_gluon_dense.py > $u
(timeout 60 python3 -m pytest -q -p no:warnings --tb=short $u -k graphs_take_it 2>&1
 for t in "$u::test_graphs_take_it_after_an_eager_call[8]" \
   "$u::test_graphs_take_it_after_an_eager_call[64]" \
   "$u::test_graphs_take_it_after_an_eager_call[512]" \
   "$u::test_kept_operand_graphs_take_it_to_64_tokens"; do
   echo "== $t alone"; timeout 60 python3 -m pytest -q -p no:warnings --tb=line "$t" 2>&1 | tail -3
 done) > $OUT/call4_flake.txt
rm $u; cat $OUT/call4_flake.txt | grep -v "^  warn\|Warning" | tail -80
