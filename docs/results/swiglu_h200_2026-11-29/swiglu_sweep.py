"""Session 50, call 1: the experts' SwiGLU in training, torch's composite
(quant.ops.reference_gated_activation and its autograd) against kernels/swiglu.py, forward and
forward + backward, at the routed rows of Qwen3-30B-A3B's experts (F = 768: 4096 and 16384
tokens x top-8) and of qwen3-moe-200m at 32 x 1024 tokens (F = 256, top-4), with a sweep of
the kernels' tiles. Checks first: the forward's bits against torch's, the backward's
closeness to torch's autograd.
Usage: swiglu_sweep.py"""
import torch
import triton

from megatron_qarl.quant.ops import reference_gated_activation
from qarl_kernels import swiglu as sw
from qarl_kernels.bench_setup import ceilings, median_us

SHAPES = [(32768, 768), (131072, 768), (131072, 256)]
FORWARD_TILES = [(16, 128, 4), (8, 256, 4), (32, 128, 4), (4, 512, 4), (16, 256, 8),
                 (32, 256, 8), (64, 128, 8)]
BACKWARD_TILES = [(8, 128, 4), (4, 256, 4), (16, 128, 4), (2, 512, 4), (8, 256, 8),
                  (16, 256, 8), (32, 128, 8), (4, 128, 4)]


def forward_with(h, probs, y, tile):
    r, f, w = tile
    rows, ffn = y.shape
    sw._swiglu_forward_kernel[(triton.cdiv(rows, r), triton.cdiv(ffn, f))](
        h, probs, y, rows, ffn, h.stride(0), y.stride(0), BLOCK_R=r, BLOCK_F=f, SOFTWARE=False,
        num_warps=w)


def backward_with(g, h, probs, dh, dp, tile):
    r, f, w = tile
    rows, ffn = g.shape
    sw._swiglu_backward_kernel[(triton.cdiv(rows, r),)](
        g, h, probs, dh, dp, rows, ffn, g.stride(0), h.stride(0), dh.stride(0), BLOCK_R=r,
        BLOCK_F=f, SOFTWARE=False, num_warps=w)


def main():
    ceil = ceilings()
    print(f"{torch.cuda.get_device_name()}: copy {ceil['copy_GBps']:.0f} GB/s", flush=True)
    for rows, ffn in SHAPES:
        torch.manual_seed(0)
        h = (3 * torch.randn(rows, 2 * ffn, device="cuda")).bfloat16()
        probs = torch.rand(rows, device="cuda")
        g = torch.randn(rows, ffn, device="cuda").bfloat16()
        want = reference_gated_activation(h, probs)
        got = sw.swiglu_forward(h, probs)
        hr, pr = h.clone().requires_grad_(), probs.clone().requires_grad_()
        reference_gated_activation(hr, pr).backward(g)
        dh, dp = sw.swiglu_backward(g, h, probs)
        print(f"rows {rows} F {ffn}: forward equal {torch.equal(got, want)}; grad_h equal "
              f"{(dh == hr.grad).float().mean().item():.6f} of elements, max |diff| "
              f"{(dh.float() - hr.grad.float()).abs().max().item():.3g}; grad_probs max rel "
              f"diff {((dp - pr.grad).abs() / pr.grad.abs().clamp_min(1e-3)).max().item():.3g}",
              flush=True)
        fwd_bytes, bwd_bytes = 6 * rows * ffn + 4 * rows, 10 * rows * ffn + 8 * rows

        def gbps(nbytes, us):
            return f"{us:8.1f} us {nbytes / us / 1e3:6.0f} GB/s ({nbytes / us / 1e3 / ceil['copy_GBps']:5.1%})"

        t_torch_fwd = median_us([lambda: reference_gated_activation(h, probs)])
        hr.grad = pr.grad = None

        def torch_step():
            reference_gated_activation(hr, pr).backward(g)
        t_torch_both = median_us([torch_step])
        print(f"  torch composite: forward {gbps(fwd_bytes, t_torch_fwd)}; forward + backward "
              f"{t_torch_both:8.1f} us", flush=True)
        y = torch.empty(rows, ffn, device="cuda", dtype=torch.bfloat16)
        for tile in FORWARD_TILES:
            t = median_us([lambda: forward_with(h, probs, y, tile)])
            assert torch.equal(y, want)
            print(f"  forward tile {tile}: {gbps(fwd_bytes, t)}", flush=True)
        dh2, dp2 = torch.empty_like(h), torch.zeros_like(probs)
        for tile in BACKWARD_TILES:
            t = median_us([lambda: backward_with(g, h, probs, dh2, dp2, tile)])
            assert torch.equal(dh2, dh)
            print(f"  backward tile {tile}: {gbps(bwd_bytes, t)}", flush=True)
        hk, pk = h.clone().requires_grad_(), probs.clone().requires_grad_()

        def kernel_step():
            sw.gated_silu(hk, pk).backward(g)
        t_kernel_both = median_us([kernel_step])
        print(f"  kernels as committed (autograd): forward + backward {t_kernel_both:8.1f} us, "
              f"{t_torch_both / t_kernel_both:.2f}x faster than torch's", flush=True)


if __name__ == "__main__":
    main()
