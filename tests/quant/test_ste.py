"""Straight-through estimator: forward uses the low-bit weight, gradients reach the master."""
import pytest
import torch

from megatron_qarl.quant import aligned_grouped_linear, aligned_linear, get_scheme


@pytest.mark.parametrize("scheme_name", ["w4a16-g32", "fp8-block", "int8", "none"])
@pytest.mark.parametrize("master_dtype", [torch.float32, torch.bfloat16])
def test_ste_gradients(scheme_name, master_dtype):
    torch.manual_seed(0)
    scheme = get_scheme(scheme_name)
    master = (torch.randn(48, 128) * 0.1).to(master_dtype).requires_grad_()
    qw = scheme.quantize_weight(master.detach(), "w")
    x = torch.randn(2, 5, 128, dtype=torch.float32, requires_grad=True)
    y = aligned_linear(x, master, qw)
    assert torch.equal(y, scheme.reference_matmul(x, qw))
    g = torch.randn_like(y)
    y.backward(g)

    # grad_input: autograd through the dequantized weight the forward used
    w_deq = qw.dequantize().to(scheme.weight_operand_dtype).float().requires_grad_(False)
    x2 = x.detach().clone().requires_grad_()
    (x2 @ w_deq.t()).backward(g)
    assert torch.allclose(x.grad, x2.grad, atol=1e-5)

    # grad_weight: the unquantized linear's, in the master's dtype
    w_full = master.detach().float().requires_grad_()
    (x.detach() @ w_full.t()).backward(g)
    assert master.grad.dtype == master_dtype
    rtol = 1e-5 if master_dtype == torch.float32 else 1e-2  # bf16: the gradient's rounding
    torch.testing.assert_close(master.grad.float(), w_full.grad.to(master_dtype).float(),
                               rtol=rtol, atol=1e-3 * rtol)


def test_grouped_ste_matches_per_expert_and_handles_empty_experts():
    torch.manual_seed(0)
    scheme = get_scheme("w4a16-g32")
    master = (torch.randn(3, 16, 64) * 0.1).requires_grad_()
    qw = scheme.quantize_weight(master.detach(), "experts")
    counts = torch.tensor([4, 0, 3])
    x = torch.randn(7, 64, requires_grad=True)
    y = aligned_grouped_linear(x, master, qw, counts)
    g = torch.randn_like(y)
    y.backward(g)
    for e, rows in ((0, slice(0, 4)), (2, slice(4, 7))):
        assert torch.equal(y[rows], scheme.reference_matmul(x[rows], qw[e]))
        assert torch.allclose(master.grad[e], g[rows].t() @ x[rows].detach(), atol=1e-5)
        assert torch.allclose(x.grad[rows], g[rows] @ qw[e].dequantize().bfloat16().float(), atol=1e-5)
    assert torch.equal(master.grad[1], torch.zeros(16, 64))


@pytest.mark.parametrize("scheme_name", ["w4a16-g32", "fp8-block", "int8", "none"])
def test_grouped_ste_with_router_probs(scheme_name):
    """fc2 of the experts: each row's prob scales its output as the scheme's SGLang kernel does
    (quant.base.scale_rows: in the fp32 accumulator, or after the rounding as Marlin), and the
    STE's grads are those of p * (x @ W_deq^T) for x and p, of p * (x @ W^T) for the masters."""
    torch.manual_seed(0)
    scheme = get_scheme(scheme_name)
    masters = [(torch.randn(128, 256) * 0.1).requires_grad_() for _ in range(3)]
    qw = scheme.quantize_weight(torch.stack([m.detach() for m in masters]), "experts")
    counts = torch.tensor([4, 0, 3])
    x = torch.randn(7, 256).bfloat16().requires_grad_()
    probs = torch.rand(7).requires_grad_()
    y = aligned_grouped_linear(x, masters, qw, counts, probs)
    raw = scheme.reference_grouped_matmul(x.detach(), qw, counts)
    scaled = scheme.reference_grouped_matmul(x.detach(), qw, counts, probs.detach())
    assert torch.equal(y, scaled) and y.dtype == torch.bfloat16
    after_rounding = raw * probs.detach()[:, None].bfloat16()  # Marlin's: W4A16's, none's
    once = (scheme.reference_grouped_matmul(x.detach().float(), qw, counts)
            * probs.detach()[:, None]).bfloat16()  # Triton's, in the fp32 accumulator
    assert torch.equal(scaled, after_rounding if scheme.prob_after_rounding else once)
    assert not torch.equal(after_rounding, once)
    g = torch.randn_like(y)
    y.backward(g)

    w_deq = torch.cat([qw[e].dequantize().to(scheme.weight_operand_dtype).float()[None]
                       for e in range(3)])
    x2, p2 = x.detach().float().requires_grad_(), probs.detach().clone().requires_grad_()
    rows = torch.repeat_interleave(torch.arange(3), counts)
    (p2[:, None] * torch.einsum("ri,roi->ro", x2, w_deq[rows])).backward(g.float())
    torch.testing.assert_close(x.grad.float(), x2.grad, rtol=2**-7, atol=1e-3)
    torch.testing.assert_close(probs.grad, p2.grad, rtol=1e-4, atol=1e-4)
    for e, part in ((0, slice(0, 4)), (2, slice(4, 7))):
        want = (g[part].float() * probs.detach()[part, None]).t() @ x.detach()[part].float()
        # the reference multiplies p * x in fp32 (kernels round it to their bf16 operand)
        torch.testing.assert_close(masters[e].grad, want, rtol=1e-5, atol=1e-6)
    assert not masters[1].grad.any()


def test_grouped_ste_takes_per_expert_masters_without_a_stacked_copy():
    torch.manual_seed(0)
    scheme = get_scheme("fp8-block")
    masters = [(torch.randn(128, 256) * 0.1).bfloat16().requires_grad_() for _ in range(3)]
    stacked = torch.stack([m.detach() for m in masters]).requires_grad_()
    qw = scheme.quantize_weight(stacked.detach(), "experts")
    counts = torch.tensor([0, 5, 2])
    x = torch.randn(7, 256, requires_grad=True)
    y = aligned_grouped_linear(x, masters, qw, counts)
    # each master feeds the STE node directly (AccumulateGrad), not through a stack
    leaves = [f.variable for f, _ in y.grad_fn.next_functions if hasattr(f, "variable")]
    assert all(any(leaf is m for leaf in leaves) for m in masters)
    x3 = x.detach().clone().requires_grad_()
    y3 = aligned_grouped_linear(x3, stacked, qw, counts)  # the [E, out, in] form still works
    assert torch.equal(y, y3)
    g = torch.randn_like(y)
    y.backward(g)
    y3.backward(g)
    assert torch.equal(x.grad, x3.grad)
    for e, m in enumerate(masters):
        assert m.grad.dtype == torch.bfloat16 and torch.equal(m.grad, stacked.grad[e])
    assert not masters[0].grad.any()  # the expert without tokens gets a zero gradient
    assert torch.allclose(masters[1].grad.float(), (g[:5].t() @ x[:5].detach()).bfloat16().float())


def test_grouped_ste_rejects_a_master_count_that_differs_from_the_experts():
    scheme = get_scheme("w4a16-g32")
    masters = [torch.randn(16, 64, requires_grad=True) for _ in range(2)]
    qw = scheme.quantize_weight(torch.stack([m.detach() for m in masters]))
    with pytest.raises(ValueError, match="2 expert master weights for 3 experts"):
        aligned_grouped_linear(torch.randn(3, 64), masters, qw, torch.tensor([1, 1, 1]))


def test_without_grad_mode_the_forward_skips_autograd(monkeypatch):
    """Rollout and old-logprob forwards run under no_grad: the op is called directly (same
    numbers), never autograd.Function.apply with one input per expert master."""
    from megatron_qarl.quant import ste

    torch.manual_seed(0)
    scheme = get_scheme("w4a16-g32")
    masters = [(torch.randn(16, 64) * 0.1).requires_grad_() for _ in range(3)]
    qw = scheme.quantize_weight(torch.stack(masters).detach(), "experts")
    counts = torch.tensor([4, 0, 3])
    x = torch.randn(7, 64)
    with_grad = aligned_grouped_linear(x, masters, qw, counts)
    dense_with_grad = aligned_linear(x, masters[0], qw[0])

    def refuse(*args):
        raise AssertionError("autograd.Function.apply called under no_grad")

    monkeypatch.setattr(ste.AlignedGroupedLinear, "apply", refuse)
    monkeypatch.setattr(ste.AlignedLinear, "apply", refuse)
    with torch.no_grad():
        y = aligned_grouped_linear(x, masters, qw, counts)
        dense = aligned_linear(x, masters[0], qw[0])
    assert torch.equal(y, with_grad.detach()) and not y.requires_grad
    assert torch.equal(dense, dense_with_grad.detach())


class _TwoRankSequence:
    """Sequence-parallel collectives of rank 0 of 2, in one process: the other rank's slice
    is fixed, and the reduce-scatter sums this rank's rows of the gradient with the other
    rank's share of them (fixed too)."""

    def __init__(self, other, other_share):
        self.other, self.other_share = other, other_share

    def gather(self, x):
        return torch.cat([x, self.other])

    def reduce_scatter(self, grad):
        return grad[: len(grad) - len(self.other)] + self.other_share


def test_sequence_parallel_linear_keeps_only_its_slice_for_backward():
    """The gathered input (TP times this rank's slice) was kept for backward; now the slice is,
    and the gradients are those of the gathered forward."""
    torch.manual_seed(0)
    scheme = get_scheme("w4a16-g32")
    master = (torch.randn(48, 128) * 0.1).requires_grad_()
    qw = scheme.quantize_weight(master.detach(), "w")
    x = torch.randn(6, 2, 128, requires_grad=True)  # [sequence slice, batch, hidden]
    shards = _TwoRankSequence(torch.randn(6, 2, 128), torch.randn(6, 2, 128))
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.shape) or t,
                                                  lambda t: t):
        y = aligned_linear(x, master, qw, shards)
    assert saved == [x.shape]
    g = torch.randn_like(y)
    y.backward(g)
    full = shards.gather(x.detach()).requires_grad_()
    master2 = master.detach().clone().requires_grad_()
    y2 = aligned_linear(full, master2, qw)
    y2.backward(g)
    assert torch.equal(y, y2)
    torch.testing.assert_close(x.grad, full.grad[:6] + shards.other_share, rtol=0, atol=0)
    torch.testing.assert_close(master.grad, master2.grad, rtol=0, atol=0)
