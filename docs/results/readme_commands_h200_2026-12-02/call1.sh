# Call 1 (nvidia-h200): README's GPU commands as a user runs them, at the tree of this commit:
# the tiny example on the GPU (README's main job with `gpu`), the export of its latest
# checkpoint, and the embedded engine's decode profile.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
( time timeout 330 bash examples/tiny/train.sh gpu ) > $OUT/tiny_gpu.txt 2>&1; echo "tiny rc $?"
tr '\r' '\n' < $OUT/tiny_gpu.txt | grep -i "greedy\|reward\|real\|error" | tail -8
timeout 120 python tools/checkpoint.py export runs/tiny-gpu/rl /tmp/tiny-w4a16 --scheme w4a16 \
  > $OUT/export.txt 2>&1; echo "export rc $?"; tail -3 $OUT/export.txt; ls /tmp/tiny-w4a16
timeout 150 python tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64 \
  > $OUT/decode_profile.txt 2>&1; echo "profile rc $?"; grep "per decode step" $OUT/decode_profile.txt
date -u
