"""The sampler's one-read draw: tokens with probabilities softmax(scores), -inf never drawn,
the right index across lanes and spans, the same tokens for the same generator state."""
import pytest
import torch

from qarl_kernels.race_argmax import race_argmax


def _generator(device, seed):
    return torch.Generator(device=device).manual_seed(seed)


def test_frequencies_follow_the_softmax(device):
    """600 rows of one score vector: each token's frequency within 4 standard deviations of
    softmax(scores); the -inf token never comes."""
    scores = torch.tensor([2.0, 1.0, 0.5, -1.0, float("-inf"), 0.0, 1.5, -0.5])
    rows = scores.expand(600, -1).contiguous().to(device)
    tokens = race_argmax(rows, _generator(device, 0), block=8).cpu()
    want = torch.softmax(scores.double(), -1)
    freq = torch.bincount(tokens, minlength=scores.numel()).double() / len(tokens)
    std = (want * (1 - want) / len(tokens)).sqrt()
    assert ((freq - want).abs() <= 4 * std + 1e-12).all(), (freq, want)
    assert freq[4] == 0


def test_the_only_finite_score_wins_wherever_it_is(device):
    """Row r has its one finite score at column (37 r) mod V: the index kept across lanes,
    blocks and spans is the column's."""
    rows, vocab = 12, 300
    scores = torch.full((rows, vocab), float("-inf"))
    cols = (37 * torch.arange(rows)) % vocab
    scores[torch.arange(rows), cols] = 0.0
    for programs in (1, rows * 5):
        tokens = race_argmax(scores.to(device), _generator(device, 1), block=16,
                             programs=programs)
        assert torch.equal(tokens.cpu(), cols)


def test_same_generator_state_same_tokens(device):
    scores = torch.randn(16, 64, generator=torch.Generator().manual_seed(2)).to(device)
    a = race_argmax(scores, _generator(device, 7), block=32)
    b = race_argmax(scores, _generator(device, 7), block=32)
    c = race_argmax(scores, _generator(device, 8), block=32)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a.dtype == torch.int64 and a.shape == (16,)


def test_bad_scores_are_refused(device):
    with pytest.raises(ValueError, match=r"pass \[batch, vocab\] fp32 rows"):
        race_argmax(torch.zeros(4, 8, dtype=torch.bfloat16, device=device),
                    _generator(device, 0))
    with pytest.raises(ValueError, match="draw fewer rows at a time"):
        race_argmax(torch.zeros(1, 2**31, device="meta"), _generator("cpu", 0))
    with pytest.raises(ValueError, match="over a non-empty vocabulary"):
        race_argmax(torch.zeros(2, 0, device=device), _generator(device, 0))
