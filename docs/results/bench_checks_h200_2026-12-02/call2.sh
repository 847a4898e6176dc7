# Call 2 (nvidia-h200): the parts whose checks changed (the experts block against the schemes'
# pure-torch references, FP8/INT8 grouped at every M, their GEMM-alone outputs) and the W4A16
# table with touched-sized copies, into a copy of docs/benchmarks.md.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
for part in experts int8 fp8 w4a16; do
  /usr/bin/time -f "$part %e s" timeout 300 python -m qarl_kernels.bench --only $part --doc $OUT/benchmarks.md \
    > $OUT/call2_$part.txt 2>&1; echo "$part rc=$?"; grep -i "Checked\|MISMATCH\| s$" $OUT/call2_$part.txt | tail -4
done
