"""Session 47, calls 7 and 8: FP8's weight quantizer as the learner calls it (check_finite=True), one
layer's experts: the NaN/inf check in its own pass (call 7: a count of the values; call 8: a
flag from the block's amax) against the torch isfinite pass before it
(step_ab.fp8_quantize_isfinite_pass), and the kernel unchecked. do_bench medians."""
import os
import sys

import torch
import triton

from megatron_qarl.quant import get_scheme
from qarl_kernels.fp8_quantize import fp8_block_quantize

sys.path.insert(0, os.path.dirname(__file__))
from step_ab import fp8_quantize_isfinite_pass  # noqa: E402


def main():
    scheme = get_scheme("fp8-block")
    print(torch.cuda.get_device_name(), flush=True)
    for dtype in (torch.float32, torch.bfloat16):
        for label, shape in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
            w = torch.randn(shape, device="cuda").to(dtype)
            a, b = fp8_block_quantize(w, scheme), fp8_quantize_isfinite_pass(w, scheme)
            assert torch.equal(a.data.view(torch.uint8), b.data.view(torch.uint8)), label
            times = {name: triton.testing.do_bench(fn, rep=200) * 1e3 for name, fn in [
                ("counted in the pass", lambda: fp8_block_quantize(w, scheme)),
                ("isfinite pass, then the kernel", lambda: fp8_quantize_isfinite_pass(w, scheme)),
                ("unchecked", lambda: fp8_block_quantize(w, scheme, check_finite=False)),
            ]}
            print(f"{label} {dtype}: " + ", ".join(f"{k} {v:.1f} us" for k, v in times.items()),
                  flush=True)
            del w


if __name__ == "__main__":
    main()
