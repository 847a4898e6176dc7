"""With token-logprob kernels registered (CUDA; here the Triton interpreter on CPU) the
sampler and the learner both take them: the learner recomputes the sampler's logprobs bit for
bit, with and without top-k/top-p, and its gradient is torch's to fp32 rounding."""
import pytest
import torch

from megatron_qarl.quant import ops
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import sample_next
from megatron_qarl.trainer.token_logprobs import token_logprobs


@pytest.fixture
def device(monkeypatch):
    from qarl_kernels import token_logprobs as kernel
    from qarl_kernels.register import register_cuda_kernels

    if torch.cuda.is_available():
        register_cuda_kernels()
        return torch.device("cuda")
    monkeypatch.setitem(ops._TOKEN_LOGPROBS, "cpu", ops.TokenLogprobOps(
        kernel.token_logprobs_forward, kernel.token_logprobs_backward,
        kernel.sample_with_logprobs))
    return torch.device("cpu")


@pytest.mark.parametrize("params", [SamplingParams(temperature=0.7), SamplingParams(top_k=5),
                                    SamplingParams(temperature=1.3, top_p=0.9)])
def test_the_learner_recomputes_the_samplers_logprobs_bit_for_bit(device, params):
    logits = (4 * torch.randn(6, 300, generator=torch.Generator().manual_seed(0))).to(
        torch.bfloat16).to(device)
    tokens, sampled = sample_next(logits, params, torch.Generator(device).manual_seed(1))

    leaf = logits.clone().requires_grad_()
    rows = torch.arange(6, device=device)
    learner, _ = token_logprobs(leaf, rows, tokens, params.temperature)
    assert torch.equal(learner.detach(), sampled)
    want = torch.log_softmax(logits.float() / params.temperature, -1).gather(
        -1, tokens[:, None]).squeeze(-1)
    torch.testing.assert_close(sampled, want, rtol=1e-5, atol=1e-5)

    weights = torch.randn(6, generator=torch.Generator().manual_seed(2)).to(device)
    (grad,) = torch.autograd.grad((learner * weights).sum(), leaf)
    ref = logits.clone().requires_grad_()
    expected = torch.log_softmax(ref.float() / params.temperature, -1).gather(
        -1, tokens[:, None]).squeeze(-1)
    (want_grad,) = torch.autograd.grad((expected * weights).sum(), ref)
    torch.testing.assert_close(grad.float(), want_grad.float(), rtol=2**-7, atol=1e-6)


def test_the_kernels_draw_inside_top_k(device):
    logits = torch.randn(64, 300, generator=torch.Generator().manual_seed(0)).to(device)
    tokens, _ = sample_next(logits, SamplingParams(top_k=5),
                            torch.Generator(device).manual_seed(1))
    assert (logits.topk(5, -1).indices == tokens[:, None]).any(-1).all()
