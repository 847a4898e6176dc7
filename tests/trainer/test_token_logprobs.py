"""The chunked token log-probabilities equal the whole-tensor log-softmax bit for bit (the
rollout engine's arithmetic), and so do their entropy and their gradient (autograd's)."""
import pytest
import torch

from megatron_qarl.trainer import token_logprobs as chunked


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_chunks_equal_the_whole_log_softmax(monkeypatch, dtype):
    monkeypatch.setattr(chunked, "_CHUNK_ELEMENTS", 4 * 50)  # 4 rows a chunk: 6 chunks
    torch.manual_seed(0)
    logits = torch.randn(37, 50).to(dtype)
    logits[5, :10] = float("-inf")  # a masked-out vocabulary slice: entropy must stay finite
    logits.requires_grad_()
    rows, targets = torch.randperm(37)[:23], torch.randint(10, 50, (23,))
    lp, entropy = chunked.token_logprobs(logits, rows, targets, 0.7, with_entropy=True)

    whole = torch.log_softmax(logits.float() / 0.7, dim=-1)
    expected = whole[rows].gather(-1, targets[:, None]).squeeze(-1)
    assert torch.equal(lp, expected.detach())
    plogp = torch.where(whole.isfinite(), whole.exp() * whole, 0.0)
    assert torch.equal(entropy, -plogp.sum(-1)[rows].detach())
    assert entropy.isfinite().all() and not entropy.requires_grad

    weights = torch.randn(23)
    (grad,) = torch.autograd.grad((lp * weights).sum(), logits)
    (expected_grad,) = torch.autograd.grad((expected * weights).sum(), logits)
    assert grad.dtype == dtype
    assert torch.equal(grad, expected_grad)  # bit for bit: a seeded run keeps its path
    untouched = torch.ones(37, dtype=torch.bool)
    untouched[rows] = False
    assert (grad[untouched] == 0).all()


def test_without_entropy_returns_an_empty_tensor():
    logits = torch.randn(4, 8)
    lp, entropy = chunked.token_logprobs(logits, torch.arange(4), torch.zeros(4, dtype=torch.long),
                                         1.0)
    assert lp.shape == (4,) and entropy.numel() == 0
