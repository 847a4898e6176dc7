"""Session 62, call 6: INT8's row quantizer on rows of 768 values (the experts' ffn: fc2's
input) in one pass over blocks of 512 + 256 (qarl_kernels, now) against one masked block of
1024 (qarl_kernels_main, 273ccb4, before): the SwiGLU rows (int8_quantize_swiglu) and plain
token rows (int8_quantize_activation), 1-32768 rows; CUDA graphs of 10 calls, interleaved
rounds, medians; codes and scales compared bit for bit. Usage: int8_tail_ab.py ROUNDS"""
import statistics
import sys

import torch

from qarl_kernels import int8_quantize as now
from qarl_kernels.bench_setup import STEP_CALLS, graph_us
from qarl_kernels_main import int8_quantize as before

ROUNDS = int(sys.argv[1])
FFN = 768


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    for rows in (1, 8, 256, 4096, 32768):
        h = (4 * torch.randn(rows, 2 * FFN, device="cuda")).bfloat16()
        probs = torch.rand(rows, device="cuda")
        x = torch.randn(rows, FFN, device="cuda").bfloat16()
        cases = {"SwiGLU rows": (lambda m: m.int8_quantize_swiglu(h, probs)),
                 "token rows": (lambda m: m.int8_quantize_activation(x))}
        for label, call in cases.items():
            same = all(torch.equal(a, b) for a, b in zip(call(now), call(before)))
            runs = [{arm: graph_us([lambda m=m: call(m)], calls=STEP_CALLS)
                     for arm, m in (("before", before), ("now", now))} for _ in range(ROUNDS)]
            med = {a: statistics.median(r[a] for r in runs) for a in ("before", "now")}
            print(f"{label} {rows}x{FFN}: before {med['before']:.2f} us, now {med['now']:.2f}: "
                  f"now {med['before'] / med['now']:.2f}x before's speed; bits "
                  f"{'equal' if same else 'DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
