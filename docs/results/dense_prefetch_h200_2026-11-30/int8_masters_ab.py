"""Session 62, call 8: INT8's weight quantizer on one Qwen3-30B-A3B layer's W2 masters (128 x
[2048, 768]) in one pass over blocks of 512 + 256 a row (qarl_kernels, now) against three
256-value blocks read twice (qarl_kernels_main, 273ccb4, before); bf16 masters read in place
(one tensor an expert, as the layers hold them) and stacked, fp32 stacked; W13 (rows of 2048,
unchanged) as the control. CUDA graphs of 10 calls, interleaved rounds, medians; codes and
scales compared bit for bit. Usage: int8_masters_ab.py ROUNDS"""
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_quantize as now
from qarl_kernels.bench_setup import STEP_CALLS, graph_us
from qarl_kernels_main import int8_quantize as before

ROUNDS = int(sys.argv[1])


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("int8")
    for label, n, k in (("W2", 2048, 768), ("W13", 1536, 2048)):
        stacked = torch.randn(128, n, k, device="cuda")
        cases = {"bf16 in place": list(stacked.bfloat16().unbind(0)),
                 "bf16 stacked": stacked.bfloat16(), "fp32 stacked": stacked}
        for case, masters in cases.items():
            a, b = now.int8_quantize(masters, scheme), before.int8_quantize(masters, scheme)
            same = torch.equal(a.data, b.data) and torch.equal(a.scale, b.scale)
            runs = [{arm: graph_us([lambda m=m: m.int8_quantize(masters, scheme,
                                                                check_finite=False)],
                                   calls=STEP_CALLS)
                     for arm, m in (("before", before), ("now", now))} for _ in range(ROUNDS)]
            med = {a: statistics.median(r[a] for r in runs) for a in ("before", "now")}
            gbps = 2 * stacked.numel() * (2 if "bf16" in case else 4) / 2 + stacked.numel()
            print(f"{label} {case}: before {med['before']:.1f} us, now {med['now']:.1f}: now "
                  f"{med['before'] / med['now']:.2f}x before's speed ({gbps / med['now'] / 1e3:.0f}"
                  f" GB/s read + written); bits {'equal' if same else 'DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
