# Call 1 (nvidia-h100-x1): the Gluon kernels' mutation review on the GPU: the baseline over the
# mutants' tests, then the 30 mutants, 6 at a time, none started after 340 s.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
python docs/results/gluon_mutants_h100_2026-12-02/run_mutants.py --out $OUT --workers 6 --deadline 340
echo "rc=$?"; date -u
