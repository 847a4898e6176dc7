"""Session 51, call 3: why the FP8 weight quantizer read W2's masters in place at 1.5-2x its
time on their stack (calls 1-2) while INT8, W4A16 and 'none' did not: the same 128 bf16
masters [2048, 768] (and W13's [1536, 2048]) laid out as separate allocations (the layers'
Parameters without Megatron's DDP), as views of one buffer in expert order with gaps, and in
reverse order (Megatron's DDP buffer), each quantizer's kernel time (do_bench medians) and the
masters' address pattern.
Usage: layout_probe.py"""
import torch
import triton

from megatron_qarl.quant import NoQuant, get_scheme
from qarl_kernels.bf16_quantize import bf16_quantize
from qarl_kernels.expert_masters import master_table
from qarl_kernels.fp8_quantize import fp8_block_quantize
from qarl_kernels.int8_quantize import int8_quantize
from qarl_kernels.w4a16_quantize import w4a16_quantize


def us(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3


def layouts(e, n, k):
    separate = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(e)]
    size = n * k + 64
    buffer = torch.randn(e * size, device="cuda", dtype=torch.bfloat16)
    in_order = [buffer[i * size:][:n * k].view(n, k) for i in range(e)]
    reverse = [buffer[(e - 1 - i) * size:][:n * k].view(n, k) for i in range(e)]
    return {"separate": separate, "one buffer": in_order, "one buffer reversed": reverse,
            "stacked": torch.stack(separate)}


QUANTIZERS = [("fp8-block", get_scheme("fp8-block"), fp8_block_quantize, {}),
              ("int8", get_scheme("int8"), int8_quantize, {}),
              ("w4a16 + lanes", get_scheme("w4a16"), w4a16_quantize, {"lane_order": True}),
              ("none", NoQuant(), bf16_quantize, {})]


def main():
    print(torch.cuda.get_device_name(), flush=True)
    for label, (e, n, k) in [("W2 E128", (128, 2048, 768)), ("W13 E128", (128, 1536, 2048))]:
        for layout, masters in layouts(e, n, k).items():
            if isinstance(masters, list):
                ptrs = [m.data_ptr() for m in masters]
                steps = sorted({b - a for a, b in zip(ptrs, ptrs[1:])})
                table = master_table(masters)
                print(f"{label} {layout}: in place {table.base.data_ptr() == ptrs[0]}, align "
                      f"{table.align}, address steps {steps[:4]}{'...' if len(steps) > 4 else ''}"
                      f" ({len(steps)} distinct), base % 2 MiB {ptrs[0] % (1 << 21)}",
                      flush=True)
            times = []
            for name, scheme, fn, kw in QUANTIZERS:
                times.append(f"{name} {us(lambda: fn(masters, scheme, check_finite=False, **kw)):.1f}")
            print(f"{label} {layout}: " + ", ".join(times) + " us", flush=True)


if __name__ == "__main__":
    main()
