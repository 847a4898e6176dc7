"""Error-token detector for sampled responses.

The paper's failure mode (Section 3.2, Fig. 6, Table 6) is a quantized policy emitting
garbled tokens mid-response and then looping on repetitive ones. A response is flagged when
  - one token repeats back-to-back at least max_token_run times, or
  - an n-gram (2 <= n <= max_ngram) repeats back-to-back at least min_loop_repeats times, or
  - after detokenisation, the share of U+FFFD replacement / unprintable characters (\\n, \\t,
    \\r excepted) exceeds max_bad_char_fraction.
The thresholds are heuristics for logging, not for the loss; tune them per tokenizer. Only
exact loops count: an irregular mix of a few tokens in printable text (Table 6's first
response, "te-to-te-te-to-to-to-teteto-...") is not flagged, so error_resp_frac is a lower
bound on that failure mode.
"""
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

TokenIds = Sequence[int] | Tensor
Detokenize = Callable[[list[int]], str]
_ALLOWED_CONTROL = frozenset("\n\t\r")


@dataclass(frozen=True)
class ErrorTokenConfig:
    max_token_run: int = 16
    max_ngram: int = 16
    min_loop_repeats: int = 8
    max_bad_char_fraction: float = 0.05

    def __post_init__(self) -> None:
        for name in ("max_token_run", "max_ngram", "min_loop_repeats"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 2:
                raise ValueError(f"ErrorTokenConfig.{name} must be an integer >= 2: got {value!r}")
        if not 0.0 <= self.max_bad_char_fraction < 1.0:
            raise ValueError("ErrorTokenConfig.max_bad_char_fraction must be in [0, 1): "
                             f"got {self.max_bad_char_fraction!r}")


@dataclass(frozen=True)
class ErrorTokenReport:
    longest_token_run: int  # most back-to-back copies of one token
    loop_period: int  # n of the n-gram with the most back-to-back copies (0: none repeats)
    loop_repeats: int  # its number of back-to-back copies (0: none repeats)
    bad_char_fraction: float  # 0.0 when no detokenize callable was given
    is_error: bool


def _longest_true_run(flags: Tensor) -> int:
    if flags.numel() == 0:
        return 0
    breaks = torch.nonzero(~flags).flatten()
    edges = torch.cat([breaks.new_tensor([-1]), breaks, breaks.new_tensor([flags.numel()])])
    return int((edges[1:] - edges[:-1] - 1).max())


def _loop_repeats(ids: Tensor, period: int, equal_pairs_cumsum: Tensor) -> int:
    """Most back-to-back copies of one n-gram of length `period` that is not a single token
    repeated (that is a token run, reported on its own)."""
    length = ids.numel()
    if length < 2 * period:
        return 1
    starts = torch.arange(length - period)
    # Inside a periodic stretch every window is a rotation of the same n-gram, so checking
    # each window for "all one token" drops exactly the stretches that are token runs.
    constant = equal_pairs_cumsum[starts + period - 1] - equal_pairs_cumsum[starts] == period - 1
    repeats_next = (ids[period:] == ids[:-period]) & ~constant
    return (_longest_true_run(repeats_next) + period) // period


def bad_char_fraction(text: str) -> float:
    """Share of U+FFFD or unprintable characters (newline, tab, carriage return allowed)."""
    if not text:
        return 0.0
    bad = sum(1 for ch in text if ch == "\ufffd" or (not ch.isprintable() and ch not in _ALLOWED_CONTROL))
    return bad / len(text)


def detect_error_tokens(token_ids: TokenIds, detokenize: Detokenize | None = None,
                        cfg: ErrorTokenConfig = ErrorTokenConfig()) -> ErrorTokenReport:
    """Inspect one response (its generated token ids only, no padding)."""
    ids = torch.as_tensor(token_ids, dtype=torch.long).flatten()
    equal_pairs = ids[1:] == ids[:-1]
    token_run = _longest_true_run(equal_pairs) + 1 if ids.numel() else 0
    equal_pairs_cumsum = torch.cat([ids.new_zeros(1), equal_pairs.long().cumsum(0)])
    loop_period, loop_repeats = 0, 0
    for period in range(2, cfg.max_ngram + 1):
        repeats = _loop_repeats(ids, period, equal_pairs_cumsum)
        if repeats > max(loop_repeats, 1):
            loop_period, loop_repeats = period, repeats
    bad_fraction = bad_char_fraction(detokenize(ids.tolist())) if detokenize is not None else 0.0
    is_error = (token_run >= cfg.max_token_run or loop_repeats >= cfg.min_loop_repeats
                or bad_fraction > cfg.max_bad_char_fraction)
    return ErrorTokenReport(token_run, loop_period, loop_repeats, bad_fraction, is_error)


def error_token_metrics(responses: Sequence[TokenIds], detokenize: Detokenize | None = None,
                        cfg: ErrorTokenConfig = ErrorTokenConfig()) -> dict[str, float]:
    """Batch summary for logging: flagged share, worst runs and loops, mean bad-char share."""
    reports = [detect_error_tokens(ids, detokenize, cfg) for ids in responses]
    if not reports:
        return {}
    return {
        "error_resp_frac": sum(r.is_error for r in reports) / len(reports),
        "error_longest_token_run_max": float(max(r.longest_token_run for r in reports)),
        "error_loop_repeats_max": float(max(r.loop_repeats for r in reports)),
        "error_bad_char_frac_mean": sum(r.bad_char_fraction for r in reports) / len(reports),
    }
