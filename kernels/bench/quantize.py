"""The per-step quantize-and-pack of one layer's experts, from a stacked master and in place."""
import torch

from megatron_qarl.quant import NoQuant, get_scheme

from ..bf16_quantize import bf16_quantize
from ..fp8_quantize import fp8_block_quantize
from ..int8_quantize import int8_quantize
from ..w4a16_lanes import to_lane_order
from ..w4a16_quantize import w4a16_quantize
from .measure import STEP_CALLS, graph_us, median_us
from .report import Table, fmt, rate_header, rates


def bench_quantize(peak, check, sweep):
    """W4A16 twice: the serving codes alone, and with the Hopper kernels' lane order written
    beside them (what the learner's cache runs for stacked experts on Hopper); the torch
    reference of the second includes w4a16_lanes' reorder. The kernels are timed in CUDA
    graphs (GPU time: do_bench timed the host where it was slower, which read the in-place
    FP8 W2 at 250-540 us where graphs and Nsight Compute read 164-181; round 49)."""
    table = Table("Fused quantize-and-pack of one layer's experts (fp32 master; CUDA graphs of "
                  f"{STEP_CALLS} calls, the torch reference by do_bench)",
                  ["weight", "format", "kernel us", *rate_header(flops=False),
                   "torch reference us", "speedup"])
    w4a16, fp8, int8 = get_scheme("w4a16"), get_scheme("fp8-block"), get_scheme("int8")
    for label, shape in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        master = torch.randn(shape, device="cuda")
        params = master.numel()
        for name, scheme, fn, out_bytes, kw, reference in [
            ("w4a16-g128", w4a16, w4a16_quantize, params * (0.5 + 2 / 128),
             {"lane_order": False}, w4a16.quantize_weight),
            ("w4a16-g128 + lane order", w4a16, w4a16_quantize, params * (1 + 2 / 128),
             {"lane_order": True},
             lambda w, **kw: to_lane_order(w4a16.quantize_weight(w, **kw).data)),
            ("fp8-block", fp8, fp8_block_quantize, params * 1.0, {}, fp8.quantize_weight),
            ("int8", int8, int8_quantize, params * (1 + 4 / shape[-1]), {},
             int8.quantize_weight),
        ]:
            got, want = fn(master, scheme, **kw), scheme.quantize_weight(master)
            check.equal(f"{name} quantize {label}", got.data.view(torch.uint8),
                        want.data.view(torch.uint8))
            check.equal(f"{name} scales {label}", got.scale, want.scale)
            if kw.get("lane_order"):
                check.equal(f"{name} lanes {label}", got.lane_codes[1],
                            to_lane_order(want.data))
            variants = [("", kw)]
            if sweep and name == "w4a16-g128":
                variants = [(f" rows{b}", {"block_rows": b, **kw}) for b in (8, 16, 32, 64)]
            for tag, options in variants:
                t = graph_us([lambda: fn(master, scheme, check_finite=False, **options)],
                             calls=STEP_CALLS)
                t_ref = median_us([lambda: reference(master, check_finite=False)])
                table.add(label, name + tag, t, *rates(t, params * 4 + out_bytes, peak), t_ref,
                          fmt(t_ref / t, ".1f"))
        del master
    return [table, bench_quantize_in_place(peak, check)]


def bench_quantize_in_place(peak, check):
    """The layers' per-step re-quantization: one bf16 master an expert (a Parameter each, as
    Megatron's SequentialMLP keeps them), read in place through expert_masters' table, against
    torch.stack first (the path before session 51). GB/s and %BW count the in-place bytes. In CUDA
    graphs: GPU time; the table of 128 masters costs about 0.1 ms of host time a call (H200
    machine, round 49), hidden where the host runs ahead of the step."""
    table = Table("Quantize of one layer's experts from one bf16 master an expert: read in "
                  f"place vs torch.stack first (CUDA graphs of {STEP_CALLS} calls)",
                  ["weight", "format", "in place us", *rate_header(flops=False),
                   "stack + kernel us", "speedup"])
    schemes = [("w4a16-g128 + lane order", get_scheme("w4a16"), w4a16_quantize,
                lambda params, k: params * (1 + 2 / 128), {"lane_order": True}),
               ("fp8-block", get_scheme("fp8-block"), fp8_block_quantize,
                lambda params, k: params * 1.0, {}),
               ("int8", get_scheme("int8"), int8_quantize,
                lambda params, k: params * (1 + 4 / k), {}),
               ("none (bf16 grouped)", NoQuant(), bf16_quantize,
                lambda params, k: params * 2.0, {})]
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(e)]
        params = e * n * k
        for name, scheme, fn, out_bytes, kw in schemes:
            got, want = fn(masters, scheme, **kw), fn(torch.stack(masters), scheme, **kw)
            check.equal(f"{name} in place {label}", got.data.view(torch.uint8),
                        want.data.view(torch.uint8))
            t = graph_us([lambda: fn(masters, scheme, check_finite=False, **kw)],
                         calls=STEP_CALLS)
            t_stack = graph_us([lambda: fn(torch.stack(masters), scheme, check_finite=False,
                                           **kw)], calls=STEP_CALLS)
            table.add(label, name, t, *rates(t, params * 2 + out_bytes(params, k), peak),
                      t_stack, fmt(t_stack / t, ".2f"))
        del masters
    return table
