# Call 2 (nvidia-h200): the other four --only parts into a copy of docs/benchmarks.md, and
# --decode-only into a second copy (the page keeps the H100's decode section).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md; cp docs/benchmarks.md $OUT/benchmarks_decode.md
for part in experts training combine sampler; do
  /usr/bin/time -f "$part %e s" timeout 150 python -m qarl_kernels.bench --only $part --doc $OUT/benchmarks.md \
    > $OUT/call2_$part.txt 2>&1; echo "$part rc=$?"; grep -i "Checked\|MISMATCH\|Error\| s$" $OUT/call2_$part.txt | tail -4
done
/usr/bin/time -f "decode %e s" timeout 220 python -m qarl_kernels.bench --decode-only --doc $OUT/benchmarks_decode.md \
  > $OUT/call2_decode.txt 2>&1; echo "decode rc=$?"; grep -i "Checked\|MISMATCH\|Error\| s$" $OUT/call2_decode.txt | tail -4
