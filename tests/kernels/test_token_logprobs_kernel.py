"""Chosen-token logprobs in one read: torch's log-softmax values, entropy and gradient to fp32
rounding, the same bits for a row in any batch, the sampler's logprobs equal to the learner's,
and race_argmax's tokens for the same generator state."""
import pytest
import torch

from qarl_kernels import token_logprobs as kernel
from qarl_kernels.race_argmax import race_argmax


@pytest.fixture
def small_spans(monkeypatch, device):
    """Spans of 96 columns in blocks of 32 on the interpreter, so small rows take 3 programs."""
    if device.type == "cpu":
        monkeypatch.setattr(kernel, "SPAN", 96)
        monkeypatch.setattr(kernel, "BLOCK", 32)
    return kernel.SPAN


def _logits(rows, vocab, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    logits = (3 * torch.randn(rows, vocab, generator=g)).to(dtype)
    logits[1, : vocab // 3] = float("-inf")  # a masked slice: entropy and grads stay finite
    return logits.to(device)


def _torch_logprobs(logits, rows, targets, temperature):
    whole = torch.log_softmax(logits.float() / temperature, dim=-1)[rows]
    plogp = torch.where(whole.isfinite(), whole.exp() * whole, 0.0)
    return whole.gather(-1, targets[:, None]).squeeze(-1), -plogp.sum(-1)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_values_entropy_and_gradient_match_torch(device, small_spans, dtype, temperature):
    vocab = 2 * small_spans + 37  # three spans, the last one ragged
    logits = _logits(9, vocab, dtype, device)
    logits[7, small_spans:2 * small_spans] = float("-inf")  # a span with no finite logit
    rows = torch.tensor([4, 2, 1, 2, 7, 2, 0, 2, 8], device=device)[::2]  # strided
    targets = torch.tensor([0, vocab - 1, 5, vocab // 2, 3], device=device)

    logprobs, entropy, norm = kernel.token_logprobs_forward(logits, rows, targets, temperature,
                                                           True)
    want_lp, want_entropy = _torch_logprobs(logits, rows, targets, temperature)
    torch.testing.assert_close(logprobs, want_lp, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(entropy, want_entropy, rtol=1e-5, atol=1e-5)
    assert norm.shape == (5, 2)

    upstream = torch.randn(5, generator=torch.Generator().manual_seed(1)).to(device)
    grad = kernel.token_logprobs_backward(upstream, logits, rows, targets, temperature, norm)
    leaf = logits.clone().requires_grad_()
    (want_grad,) = torch.autograd.grad(
        (_torch_logprobs(leaf, rows, targets, temperature)[0] * upstream).sum(), leaf)
    assert grad.dtype == dtype and grad.shape == logits.shape
    torch.testing.assert_close(grad.float(), want_grad.float(), rtol=2**-7, atol=1e-6)
    untouched = torch.ones(9, dtype=torch.bool, device=device)
    untouched[rows] = False
    assert (grad[untouched] == 0).all()


def test_a_rows_bits_do_not_depend_on_its_batch(device, small_spans):
    """One row alone, in a batch of nine, and drawn by the sampler from the last position of
    [batch, positions, vocab] logits (the engine's view): the same logprob bits. On the GPU
    with Qwen3's vocabulary: ten spans, the last one ragged."""
    vocab = 151936 if device.type == "cuda" else 3 * small_spans + 40
    logits = _logits(9 * 3, vocab, torch.bfloat16, device).reshape(9, 3, vocab)
    tokens, sampled = kernel.sample_with_logprobs(logits[:, -1], 0.8,
                                                  torch.Generator(device).manual_seed(3))
    logits = logits.reshape(27, vocab)
    every, _, _ = kernel.token_logprobs_forward(logits, 3 * torch.arange(9, device=device) + 2,
                                                tokens, 0.8, True)
    assert torch.equal(sampled, every)
    logits = logits[2::3]
    for row in (0, 5):
        alone, _, _ = kernel.token_logprobs_forward(
            logits, torch.tensor([row], device=device), tokens[row:row + 1], 0.8, False)
        assert torch.equal(alone, every[row:row + 1])


def test_the_draw_is_race_argmaxs_on_the_scaled_logits(device, small_spans):
    logits = _logits(6, 2 * small_spans + 5, torch.bfloat16, device)
    tokens, _ = kernel.sample_with_logprobs(logits, 0.6, torch.Generator(device).manual_seed(4))
    want = race_argmax(logits.float() * kernel.inverse_temperature(0.6),
                       torch.Generator(device).manual_seed(4), block=kernel.BLOCK)
    assert torch.equal(tokens, want)
    assert tokens.dtype == torch.int64
    assert (tokens[1] >= logits.shape[1] // 3).all()  # never a -inf logit


def test_bad_logits_are_refused(device):
    with pytest.raises(ValueError, match="unit stride along a non-empty vocabulary"):
        kernel.token_logprobs_forward(torch.zeros(4, 8, device=device).t(),
                                      torch.arange(2, device=device),
                                      torch.zeros(2, dtype=torch.long, device=device), 1.0, False)
    with pytest.raises(ValueError, match="draw fewer rows at a time"):
        kernel.sample_with_logprobs(torch.zeros(1, 2**31, device="meta"), 1.0,
                                    torch.Generator())
    with pytest.raises(ValueError, match="non-empty vocabulary"):
        kernel.sample_with_logprobs(torch.zeros(2, 0, device=device), 1.0, torch.Generator())


def test_bad_targets_temperatures_and_shapes(device, small_spans):
    """A target outside the vocabulary read a neighbouring row's logit, a short targets or
    upstream tensor was read past its end, and T <= 0 gave NaN or out-of-vocabulary tokens
    (a review): now NaN, which stops training, and clear errors."""
    logits = _logits(3, 2 * small_spans + 5, torch.float32, device)
    vocab, rows = logits.shape[1], torch.arange(3, device=device)
    targets = torch.tensor([vocab, vocab - 2, -1], device=device)
    logprobs, _, _ = kernel.token_logprobs_forward(logits, rows, targets, 1.0, False)
    assert logprobs[[0, 2]].isnan().all() and logprobs[1].isfinite()
    with pytest.raises(ValueError, match=r"rows, targets of shapes \[\(3,\), \(2,\)\]"):
        kernel.token_logprobs_forward(logits, rows, targets[:2], 1.0, False)
    _, _, norm = kernel.token_logprobs_forward(logits, rows, targets.clamp(0, 5), 1.0, False)
    with pytest.raises(ValueError, match="rows, targets, upstream of shapes"):
        kernel.token_logprobs_backward(torch.ones(2, device=device), logits, rows,
                                       targets.clamp(0, 5), 1.0, norm)
    for temperature in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="needs a finite T > 0"):
            kernel.sample_with_logprobs(logits, temperature, torch.Generator(device))
