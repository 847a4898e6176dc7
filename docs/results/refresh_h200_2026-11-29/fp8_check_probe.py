"""Session 48, call 1: FP8's weight quantizer kernel with its NaN/inf check three ways, one
layer's experts, kernel time alone (do_bench medians, no host sync): main's flag (NaN taken as
inf in the block's amax, an atomic where the amax is inf), the block's NaN or inf carried into
its scale by a NaN-propagating max (branch wip/fp8-nan-in-scales; the check then reads the
scales: + the torch count of non-finite scales into the counter), and no check (a plain max)."""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.fp8_block import BLOCK, FP8_DTYPE
from qarl_kernels import fp8_quantize as main
from qarl_kernels.fp8_quantize import _EPS, _INV_MAX, _e4m3, _scale_of


@triton.jit
def _max_keeping_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _probe_kernel(w_ptr, q_ptr, s_ptr, N, K, stride_se, stride_sn, BLOCK: tl.constexpr,
                  NAN_IN_SCALE: tl.constexpr):
    pid_n, pid_k, e = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    offs_k = pid_k * BLOCK + tl.arange(0, BLOCK)
    mask = (offs_n[:, None] < N) & (offs_k[None, :] < K)
    base = e.to(tl.int64) * N * K + offs_n[:, None].to(tl.int64) * K + offs_k[None, :]
    w = tl.load(w_ptr + base, mask=mask, other=0.0).to(tl.float32)
    if NAN_IN_SCALE:
        amax = tl.reduce(tl.reduce(tl.abs(w), 1, _max_keeping_nan), 0, _max_keeping_nan)
        scale = tl.maximum(amax, _EPS, propagate_nan=tl.PropagateNan.ALL) * _INV_MAX
    else:
        scale = _scale_of(tl.max(tl.max(tl.abs(w), 1), 0))
    tl.store(q_ptr + base, _e4m3(w, scale), mask=mask)
    tl.store(s_ptr + e * stride_se + pid_n * stride_sn + pid_k, scale)


def launch(kind, w, q, s, counter):
    e, n, k = w.shape
    grid = (triton.cdiv(n, BLOCK), triton.cdiv(k, BLOCK), e)
    if kind == "flag":
        main._fp8_weight_kernel[grid](w, q, s, counter, n, k, s.stride(0), s.stride(1),
                                      BLOCK=BLOCK, num_warps=8)
        return
    _probe_kernel[grid](w, q, s, n, k, s.stride(0), s.stride(1), BLOCK=BLOCK,
                        NAN_IN_SCALE=kind != "none", num_warps=8)
    if kind == "scale + count":
        counter += (~torch.isfinite(s)).sum(dtype=torch.int32)


def main_():
    scheme = get_scheme("fp8-block")
    print(torch.cuda.get_device_name(), flush=True)
    for dtype in (torch.float32, torch.bfloat16):
        for label, shape in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
            w = torch.randn(shape, device="cuda").to(dtype)
            want = scheme.quantize_weight(w)
            q = torch.empty(shape, device="cuda", dtype=FP8_DTYPE)
            s = torch.empty(want.scale.shape, device="cuda", dtype=torch.float32)
            counter = torch.zeros(1, device="cuda", dtype=torch.int32)
            times = {}
            for kind in ("flag", "scale", "scale + count", "none"):
                launch(kind, w, q, s, counter)
                assert torch.equal(q.view(torch.uint8), want.data.view(torch.uint8)), kind
                assert torch.equal(s, want.scale), kind
                times[kind] = triton.testing.do_bench(
                    lambda: launch(kind, w, q, s, counter), rep=200) * 1e3
            w[5, 200, 300] = float("nan")
            w[9, 1535, 767] = float("inf")
            launch("scale", w, q, s, counter)
            assert int((~torch.isfinite(s)).sum()) == 2
            gbps = {k: (w.numel() * w.element_size() + w.numel()) / t / 1e3
                    for k, t in times.items()}
            print(f"{label} {dtype}: " + ", ".join(
                f"{k} {t:.1f} us ({gbps[k]:.0f} GB/s)" for k, t in times.items()), flush=True)
            del w


if __name__ == "__main__":
    main_()
