"""The sampler: truncation by top-k/top-p, and the logprob it reports (temperature-scaled,
before truncation, as SGLang reports it)."""
import pytest
import torch

from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import sample_next


def test_top_k_one_is_greedy_and_logprob_is_temperature_scaled():
    logits = torch.tensor([[0.0, 2.0, 1.0, -1.0], [3.0, 0.0, 0.0, 2.9]])
    params = SamplingParams(temperature=0.5, top_k=1)
    tokens, logprobs = sample_next(logits, params, torch.Generator().manual_seed(0))
    assert tokens.tolist() == [1, 0]
    expected = torch.log_softmax(logits / 0.5, dim=-1).gather(-1, tokens[:, None]).squeeze(-1)
    torch.testing.assert_close(logprobs, expected)


def test_top_p_never_samples_outside_the_nucleus():
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]])
    params = SamplingParams(top_p=0.75)  # nucleus {0, 1}: 0.5 < 0.75 <= 0.8
    gen = torch.Generator().manual_seed(0)
    drawn = {int(sample_next(probs.log(), params, gen)[0]) for _ in range(300)}
    assert drawn == {0, 1}
    drawn_k = {int(sample_next(probs.log(), SamplingParams(top_k=3), gen)[0]) for _ in range(300)}
    assert drawn_k == {0, 1, 2}


def test_top_p_cuts_the_temperature_scaled_distribution_jointly_with_top_k():
    """Both as SGLang's sampler takes them (a review's mutations passed every test):
    - the nucleus of softmax(logits / T): at T = 0.5 token 0 holds 0.84 >= top-p 0.8, alone;
      unscaled it holds 0.61 and token 1 would be drawn too;
    - top-p over the full distribution's probabilities, intersected with top-k: tokens 0 and
      1 hold 0.29 and 0.26, both under top-p 0.5; renormalized after top-k (vLLM's order)
      token 0 would hold 0.53 and stand alone."""
    gen = torch.Generator().manual_seed(0)

    def drawn(logits, params):
        return set(sample_next(torch.tensor([logits]).expand(300, len(logits)), params,
                               gen)[0].tolist())

    assert drawn([2.0, 1.0, 0.5, -1.0], SamplingParams(temperature=0.5, top_p=0.8)) == {0}
    assert drawn([1.0, 0.9, 0.8, 0.7], SamplingParams(top_k=2, top_p=0.5)) == {0, 1}


def test_tokens_are_drawn_from_the_temperature_scaled_distribution():
    """20000 rows of the same logits: each token's frequency within 4 standard deviations of
    softmax(logits / T); with top-k 2, the kept tokens renormalized."""
    logits = torch.tensor([2.0, 1.0, 0.5, -1.0]).expand(20000, 4)
    gen = torch.Generator().manual_seed(0)
    for params, want in [
        (SamplingParams(temperature=0.8), torch.softmax(logits[0] / 0.8, -1)),
        (SamplingParams(top_k=2), torch.softmax(torch.tensor([2.0, 1.0]), -1)),
    ]:
        tokens, _ = sample_next(logits, params, gen)
        freq = torch.bincount(tokens, minlength=4).double() / len(tokens)
        want = torch.cat([want, torch.zeros(4 - len(want))]).double()
        std = (want * (1 - want) / len(tokens)).sqrt()
        assert ((freq - want).abs() <= 4 * std + 1e-12).all(), (freq, want)


def test_ties_keep_exactly_k_tokens_and_greedy_takes_the_first():
    """bf16 logits tie often; a threshold at the k-th value kept every tied token (a review
    found top-k 1 drawing between tied maxima, and top-k 2 from four tokens)."""
    gen = torch.Generator().manual_seed(0)
    tied = torch.tensor([[17.0, 17.0, 3.0, 1.0]]).expand(200, 4)
    assert set(sample_next(tied, SamplingParams(top_k=1), gen)[0].tolist()) == {0}
    three_tied = torch.tensor([[3.0, 2.0, 2.0, 2.0, -5.0]]).expand(2000, 5)
    tokens, _ = sample_next(three_tied, SamplingParams(top_k=2), gen)
    assert 0 in tokens.tolist() and len(set(tokens.tolist())) == 2


def test_the_nucleus_ends_where_the_mass_before_a_token_reaches_top_p():
    """Four tokens of 0.25: the mass before the third is exactly 0.5, so top-p 0.5 keeps two."""
    tokens, _ = sample_next(torch.zeros(400, 4), SamplingParams(top_p=0.5),
                            torch.Generator().manual_seed(0))
    assert set(tokens.tolist()) == {0, 1}


@pytest.mark.parametrize("flags,name", [({"top_k": 0}, "--rollout-top-k"),
                                        ({"top_k": -2}, "--rollout-top-k"),
                                        ({"max_new_tokens": 0}, "--rollout-max-new-tokens"),
                                        ({"temperature": 0.0}, "--rollout-temperature"),
                                        ({"n": 0}, "--n-samples-per-prompt")])
def test_sampling_params_out_of_range_name_their_flag(flags, name):
    with pytest.raises(ValueError, match=name):
        SamplingParams(**flags)
