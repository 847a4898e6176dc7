"""Session 51, call 1: the weight quantizers of 1787b61 (`qarl_kernels_old`, a copy of that
tree's kernels/) against this tree's, which read each expert's master through a table of
offsets (kernels/expert_masters.py), on one Qwen3-30B-A3B layer's experts (E128: fc1 [1536,
2048], fc2 [2048, 768]). For each scheme: the old kernel on the stack (torch.stack of bf16
masters, one allocation an expert, as the layers keep them) without and with the stack's
time, the new kernel on the stack, and the new kernel on the masters in place. Each output
checked bit for bit against the old kernel's first. Medians of triton's do_bench.
Usage: kernel_ab.py (PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import torch
import triton

from megatron_qarl.quant import NoQuant, get_scheme
import qarl_kernels as new
import qarl_kernels_old as old
from qarl_kernels import bf16_quantize, fp8_quantize, int8_quantize, w4a16_quantize  # noqa
from qarl_kernels_old import (bf16_quantize as bf16_old, fp8_quantize as fp8_old,  # noqa
                              int8_quantize as int8_old, w4a16_quantize as w4a16_old)


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


SCHEMES = [  # name, scheme, new quantizer, old quantizer, keywords
    ("w4a16-g128 + lane order", get_scheme("w4a16"), w4a16_quantize.w4a16_quantize,
     w4a16_old.w4a16_quantize, {"lane_order": True}),
    ("fp8-block", get_scheme("fp8-block"), fp8_quantize.fp8_block_quantize,
     fp8_old.fp8_block_quantize, {}),
    ("int8", get_scheme("int8"), int8_quantize.int8_quantize, int8_old.int8_quantize, {}),
    ("none", NoQuant(), bf16_quantize.bf16_quantize, bf16_old.bf16_quantize, {}),
]


def main():
    print(torch.cuda.get_device_name(), new.__file__, old.__file__, flush=True)
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(e)]
        stack = torch.stack(masters)
        for name, scheme, fn_new, fn_old, kw in SCHEMES:
            want = fn_old(stack, scheme, **kw)
            for got in (fn_new(stack, scheme, **kw), fn_new(masters, scheme, **kw)):
                assert torch.equal(got.data.view(torch.uint8), want.data.view(torch.uint8))
                assert (want.scale is None) or torch.equal(got.scale, want.scale)
            t_old = us(lambda: fn_old(stack, scheme, check_finite=False, **kw))
            t_old_stack = us(lambda: fn_old(torch.stack(masters), scheme, check_finite=False,
                                            **kw))
            t_new = us(lambda: fn_new(stack, scheme, check_finite=False, **kw))
            t_in_place = us(lambda: fn_new(masters, scheme, check_finite=False, **kw))
            print(f"{label} {name}: old kernel on the stack {t_old:.1f} us, with torch.stack "
                  f"{t_old_stack:.1f}; new kernel on the stack {t_new:.1f} "
                  f"({t_new / t_old:.3f}x old), in place {t_in_place:.1f} "
                  f"({t_in_place / t_old_stack:.3f}x stack + old kernel)", flush=True)
        del masters, stack


if __name__ == "__main__":
    main()
