"""The rollout sampler: its draw, and its whole step from bf16 logits."""
import torch

from megatron_qarl.quant.ops import reference_race_argmax

from ..race_argmax import race_argmax
from ..token_logprobs import inverse_temperature, sample_with_logprobs, token_logprobs_forward
from .measure import graph_us
from .report import Table, fmt, rate_header, rates


def bench_sampler(peak, check):
    """The rollout sampler's draw over Qwen3's vocabulary, in CUDA graphs (the default CUDA
    generator, which graphs may use): the torch race against race_argmax. The check: with one
    finite score a row, wherever it is, both draw it."""
    table = Table("Sampler draw: the torch race vs race_argmax (V = 151936, CUDA graphs)",
                  ["B rows", "torch race us", "race_argmax us", *rate_header(flops=False),
                   "speedup"])
    vocab = 151936
    for b in (1, 32, 256, 1024):
        only = torch.full((b, vocab), float("-inf"), device="cuda")
        cols = (7919 * torch.arange(b, device="cuda")) % vocab
        only[torch.arange(b, device="cuda"), cols] = 0.0
        check.equal(f"race_argmax B={b}", race_argmax(only, None),
                    reference_race_argmax(only, None))
        scores = torch.randn(b, vocab, device="cuda").log_softmax(-1)
        t_ref = graph_us([lambda: reference_race_argmax(scores, None)])
        t_ours = graph_us([lambda: race_argmax(scores, None)])
        table.add(str(b), t_ref, t_ours, *rates(t_ours, scores.numel() * 4, peak),
                  fmt(t_ref / t_ours, ".2f"))
    return [table, _bench_sampler_step(peak, check)]


def _bench_sampler_step(peak, check):
    """The whole sampler step from bf16 logits: torch's cast, division and log-softmax, then
    race_argmax and the gather, against sample_with_logprobs's one read. The checks: the same
    tokens as race_argmax on the scaled logits, logprobs within 1e-5 of torch's (rtol and atol,
    as tests/kernels/test_token_logprobs_kernel.py), and the learner's kernel recomputing them
    bit for bit."""
    table = Table("Sampler step from bf16 logits: log-softmax + race_argmax + gather vs "
                  "sample_with_logprobs (V = 151936, CUDA graphs)",
                  ["B rows", "T", "torch + race_argmax us", "one read us",
                   *rate_header(flops=False), "speedup"])
    vocab = 151936

    def torch_step(logits, temperature):
        scaled = logits.float()
        if temperature != 1.0:
            scaled = scaled / temperature
        logprobs = torch.log_softmax(scaled, dim=-1)
        tokens = race_argmax(logprobs, None)
        return tokens, logprobs.gather(-1, tokens[:, None]).squeeze(-1)

    for b, temperature in ((1, 1.0), (32, 1.0), (256, 1.0), (256, 0.7), (1024, 1.0)):
        logits = (4 * torch.randn(b, vocab, device="cuda")).to(torch.bfloat16)
        name = f"sampler step B={b} T={temperature}"
        seed = torch.cuda.get_rng_state()
        tokens, logprobs = sample_with_logprobs(logits, temperature, None)
        torch.cuda.set_rng_state(seed)
        check.equal(name + " tokens", tokens,
                    race_argmax(logits.float() * inverse_temperature(temperature), None))
        want = torch.log_softmax(logits.float() / temperature, -1).gather(-1, tokens[:, None])
        check.close(name + " logprobs", logprobs, want.squeeze(-1), rtol=1e-5, atol=1e-5)
        rows = torch.arange(b, device="cuda")
        check.equal(name + " learner", token_logprobs_forward(logits, rows, tokens, temperature,
                                                              False)[0], logprobs)
        t_ref = graph_us([lambda: torch_step(logits, temperature)])
        t_ours = graph_us([lambda: sample_with_logprobs(logits, temperature, None)])
        table.add(str(b), str(temperature), t_ref, t_ours,
                  *rates(t_ours, logits.numel() * 2, peak), fmt(t_ref / t_ours, ".2f"))
    return table
