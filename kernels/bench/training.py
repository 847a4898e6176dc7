"""The experts' SwiGLU of a training step, forward and backward."""
import torch

from megatron_qarl.quant.ops import reference_gated_activation

from ..swiglu import gated_silu, swiglu_forward
from .cases import TOP_K
from .measure import median_us
from .report import Table, fmt, rate_header, rates


def bench_training_swiglu(peak, check):
    """The experts' SwiGLU of a training forward and its backward (Qwen3-30B-A3B, F = 768,
    top-8 routed rows), eagerly as training runs them: torch's composite and its autograd
    against swiglu.py, each backward through autograd.grad of one retained graph (no leaf
    grads accumulated). Checks: the forward's bits, grad_h within a bf16 ulp."""
    table = Table("Experts' SwiGLU in training: torch's composite vs swiglu.py (eager)",
                  ["M tokens", "rows", "torch fwd us", "kernel fwd us",
                   *rate_header("fwd", flops=False), "torch bwd us", "kernel bwd us",
                   *rate_header("bwd", flops=False), "fwd speedup", "bwd speedup"])
    ffn = 768
    for m in (1024, 4096, 16384):
        rows = m * TOP_K
        h = (3 * torch.randn(rows, 2 * ffn, device="cuda")).bfloat16().requires_grad_()
        grad = torch.randn(rows, ffn, device="cuda").bfloat16()
        y_ref, y_ours = reference_gated_activation(h), gated_silu(h)
        check.equal(f"training swiglu forward M={m}", y_ours, y_ref)
        want = torch.autograd.grad(y_ref, h, grad, retain_graph=True)
        got = torch.autograd.grad(y_ours, h, grad, retain_graph=True)
        check.close(f"training swiglu grad_h M={m}", got[0], want[0])
        with torch.no_grad():
            t_ref = median_us([lambda: reference_gated_activation(h)])
            t_ours = median_us([lambda: swiglu_forward(h)])
        t_ref_bwd = median_us([lambda: torch.autograd.grad(y_ref, h, grad, retain_graph=True)])
        t_ours_bwd = median_us([lambda: torch.autograd.grad(y_ours, h, grad,
                                                            retain_graph=True)])
        table.add(str(m), str(rows), t_ref, t_ours, *rates(t_ours, 6 * rows * ffn, peak),
                  t_ref_bwd, t_ours_bwd, *rates(t_ours_bwd, 10 * rows * ffn, peak),
                  fmt(t_ref / t_ours, ".2f"), fmt(t_ref_bwd / t_ours_bwd, ".2f"))
    return [table]
