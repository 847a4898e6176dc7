export PYTHONUNBUFFERED=1
BASE=/tmp/pp:$PWD:/tmp/site
python3 -c "import sys; sys.path[:0]=['/tmp/site']; import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl
mkdir -p /tmp/pp /tmp/ppold && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.gpu/old39/oldk /tmp/ppold/qarl_kernels
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=$BASE
python3 .gpu/split39_err.py 2>&1 | grep -v Warn | tee $OUT/err.txt
timeout 170 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_gluon.py -k "split or swiglu or graphs or rule" tests/kernels/test_w4a16_swiglu.py tests/kernels/test_split_k.py > $OUT/pytest.txt 2>&1; tail -3 $OUT/pytest.txt
for tree in new old; do
  if [ $tree = old ]; then export PYTHONPATH=/tmp/ppold:$PWD:/tmp/site; else export PYTHONPATH=$BASE; fi
  cp docs/benchmarks.md /tmp/b_$tree.md
  timeout 150 python3 -m qarl_kernels.bench --only experts --doc /tmp/b_$tree.md > $OUT/experts_$tree.txt 2>&1; echo $tree experts rc=$?
  timeout 100 python3 -c "from qarl_kernels import bench; c = bench.Checker(); print(bench.bench_swiglu(c)[0].markdown()); print(len(c.checked), c.failed)" > $OUT/swiglu_$tree.txt 2>&1; echo $tree swiglu rc=$?
done
cp /tmp/b_new.md $OUT/bench_experts_new.md
