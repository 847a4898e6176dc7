"""The FP8 activation quantizers before (a division by the scale: the kernels of the commit
given as BEFORE, imported from the module file given) and after (x * fp32(448 * rcp(amax))):
time a call in CUDA graphs of 10 calls (qarl_kernels.bench.measure.graph_us), inputs rotated
past L2 (at most 8 copies: call 3's first try made thousands of 1-row copies and timed out),
after checking the new kernels against the CPU reference. Usage:
python quantizer_ab.py <old fp8_quantize.py copied into qarl_kernels as fp8_quantize_before.py>"""
import importlib

import torch

from megatron_qarl.quant.fp8_block import quantize_activation
from megatron_qarl.quant.ops import reference_gated_activation
from qarl_kernels import fp8_quantize as after
from qarl_kernels.bench.measure import copies_for, graph_us

before = importlib.import_module("qarl_kernels.fp8_quantize_before")


def main():
    print(torch.cuda.get_device_name())
    print("| quantizer | rows x K | before us | after us | after / before |")
    print("|---|---|---|---|---|")
    for label, fn_name, k in [("activations", "fp8_quantize_activation", 2048),
                              ("activations", "fp8_quantize_activation", 4096),
                              ("activations", "fp8_quantize_activation", 768),
                              ("SwiGLU", "fp8_quantize_swiglu", 768)]:
        for rows in (1, 64, 256, 4096, 16384, 65536):
            width = 2 * k if label == "SwiGLU" else k
            xs = [torch.randn(rows, width, device="cuda").bfloat16()
                  for _ in range(min(copies_for(rows * width * 2), 8))]
            x0 = xs[0]
            q, s = getattr(after, fn_name)(x0)
            ref_in = reference_gated_activation(x0) if label == "SwiGLU" else x0
            want_q, want_s = quantize_activation(ref_in)
            assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8)), (label, rows, k)
            assert torch.equal(s, want_s), (label, rows, k)
            times = [graph_us([lambda x=x, m=m: getattr(m, fn_name)(x) for x in xs], calls=10)
                     for m in (before, after)]
            print(f"| {label} | {rows} x {k} | {times[0]:.1f} | {times[1]:.1f} | "
                  f"{times[1] / times[0]:.3f} |")


if __name__ == "__main__":
    main()
