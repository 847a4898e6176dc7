"""Session 50, call 5: the FP8 GEMM table of `bench --only fp8` (round 45's call 9 took each
column as the median of 3 rounds of its graphs) with the median of ROUNDS rounds, to read
the cells near 1.3x (W13 EP8 at 4096 tokens with the quantizer: 1.28x in call 9's medians,
1.38-1.39x in single rounds) more firmly.
Usage: fp8_rounds.py ROUNDS"""
import sys

import torch

from qarl_kernels import bench
from qarl_kernels.bench_setup import ceilings


def main(rounds):
    bench.FP8_ROUNDS = int(rounds)
    torch.manual_seed(0)
    check = bench.Checker()
    peak = ceilings()
    print(f"{torch.cuda.get_device_name()}: copy {peak['copy_GBps']:.0f} GB/s, bf16 "
          f"{peak['bf16_TFLOPs']:.0f} TFLOP/s", flush=True)
    for table in bench.bench_fp8(peak, check):
        print(table.markdown(), flush=True)
    print(f"checked: {len(check.checked)}, mismatches: {check.failed}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
