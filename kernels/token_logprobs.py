"""Chosen-token log-probabilities of the temperature-scaled softmax in one read of the logits,
for the sampler and the learner alike.

Torch's path, `log_softmax(logits.float() / T)` and a gather, writes the whole [rows, vocab]
fp32 matrix two or three times. With Qwen3's 151936-token vocabulary that was 127 + 213 us of a
decode step at batch 256 on the H100 beside the draw's 137 us, and 16.6 ms forward + 35.7 ms
backward for 8190 learner rows (docs/training.md). Here a program reduces a fixed span of a
row's columns to its max, its sum of exponentials and their first moment (for the entropy);
a second kernel combines a row's spans in a fixed order and gathers the chosen logit. The
spans depend on the vocabulary only, never on the batch, so a row's bits do not depend on
the batch it came in: the engine and the learner both call these kernels on CUDA, and equal
logits give equal logprobs bit for bit.

The logits are scaled by fp32(1 / T), not divided by T as torch is (at most an ulp apart; at
T = 1 the same). For the sampler the same kernel also runs race_argmax's exponential race over
the span, with the same Philox counters: its tokens are
`race_argmax(logits.float() * fp32(1 / T))`'s for the same generator state. The race is switched on at run time, not compiled in, so both callers run
one binary (a constexpr would let the compiler lay out, and so sum, the span differently).
"""
from typing import Tuple

import numpy as np
import torch
import triton
import triton.language as tl

#: columns of a row one program reduces: fixes the summation order for every batch
SPAN = 8192
#: columns a loop step loads (race_argmax's default block, so the race times are its own)
BLOCK = 2048


@triton.jit
def _scaled(ptr, cols, end, inv_temperature):
    """logits.float() * fp32(1 / T) at `cols` (-inf past `end`): a multiply, not torch's IEEE
    division, which took most of the issue slots; by 1 it is exact."""
    x = tl.load(ptr + cols, mask=cols < end, other=float("-inf"))
    return x.to(tl.float32) * inv_temperature


# One binary serves the sampler and the learner: `race` and `entropy` are never-specialized
# runtime flags, and both callers pass int64 row indices, tokens and unit-stride rows. The
# race branch also takes the span's max (exact in any order); the sums run in common code.
@triton.jit(do_not_specialize=["race"])
def _span_kernel(logits_ptr, rows_ptr, seed_ptr, stats_ptr, key_ptr, index_ptr, vocab, stride,
                 inv_temperature, race, SPAN: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    part = tl.program_id(1)
    parts = tl.num_programs(1)
    base = logits_ptr + tl.load(rows_ptr + i).to(tl.int64) * stride
    QUARTER: tl.constexpr = BLOCK // 4
    lanes = tl.arange(0, QUARTER)
    start = part * SPAN
    end = tl.minimum(start + SPAN, vocab)
    top = tl.full([QUARTER], float("-inf"), tl.float32)
    best = tl.full([QUARTER], float("-inf"), tl.float32)
    index = tl.zeros([QUARTER], tl.int32)
    seed = tl.load(seed_ptr)
    row_counters = tl.cdiv(vocab, BLOCK) * QUARTER  # race_argmax's Philox counters
    for first in range(start, end, BLOCK):
        if race:
            times = tl.rand4x(seed, i * row_counters + first // 4 + lanes)
            for quarter in tl.static_range(4):
                cols = first + quarter * QUARTER + lanes
                x = _scaled(base, cols, end, inv_temperature)
                top = tl.maximum(top, x)
                key = x - tl.log(-tl.log(times[quarter]))
                wins = key > best
                best = tl.where(wins, key, best)
                index = tl.where(wins, cols, index)
        else:
            for quarter in tl.static_range(4):
                top = tl.maximum(top, _scaled(base, first + quarter * QUARTER + lanes, end,
                                              inv_temperature))
    peak = tl.max(top, 0)
    total = tl.zeros([QUARTER], tl.float32)
    moment = tl.zeros([QUARTER], tl.float32)  # sum of e * (x - peak), for the entropy
    if peak > float("-inf"):
        for first in range(start, end, BLOCK):  # the span again, from L2
            for quarter in tl.static_range(4):
                x = _scaled(base, first + quarter * QUARTER + lanes, end, inv_temperature)
                shifted = x - peak
                e = tl.exp(shifted)
                total += e
                moment += e * tl.where(e > 0, shifted, 0.0)  # no -inf * 0
    out = stats_ptr + (i * parts + part) * 3
    tl.store(out, peak)
    tl.store(out + 1, tl.sum(total, 0))
    tl.store(out + 2, tl.sum(moment, 0))
    if race:
        lane = tl.argmax(best, 0)
        tl.store(key_ptr + i * parts + part, tl.max(best, 0))
        tl.store(index_ptr + i * parts + part, tl.sum(tl.where(lanes == lane, index, 0), 0))


@triton.jit(do_not_specialize=["race", "entropy"])
def _row_kernel(stats_ptr, key_ptr, index_ptr, logits_ptr, rows_ptr, tokens_ptr, logprob_ptr,
                entropy_ptr, norm_ptr, parts, vocab, stride, inv_temperature, race, entropy,
                PARTS: tl.constexpr):
    i = tl.program_id(0)
    p = tl.arange(0, PARTS)
    valid = p < parts
    span = stats_ptr + (i * parts + p) * 3
    peaks = tl.load(span, mask=valid, other=float("-inf"))
    peak = tl.max(peaks, 0)
    live = peaks > float("-inf")
    weight = tl.where(live, tl.exp(peaks - peak), 0.0)
    totals = tl.load(span + 1, mask=valid, other=0.0)
    total = tl.sum(totals * weight, 0)
    log_total = tl.log(total)
    if race:
        keys = tl.load(key_ptr + i * parts + p, mask=valid, other=float("-inf"))
        winner = tl.argmax(keys, 0)
        token = tl.sum(tl.where(p == winner, tl.load(index_ptr + i * parts + p, mask=valid,
                                                     other=0), 0), 0).to(tl.int64)
        tl.store(tokens_ptr + i, token)
    else:
        token = tl.load(tokens_ptr + i)
    row = tl.load(rows_ptr + i).to(tl.int64)
    # a target outside the vocabulary gets NaN (the trainer stops on a non-finite loss), not
    # a neighbouring row's logit: checking the targets on the host would need a sync
    chosen = tl.load(logits_ptr + row * stride + token, mask=(token >= 0) & (token < vocab),
                     other=float("nan")).to(tl.float32) * inv_temperature
    tl.store(logprob_ptr + i, (chosen - peak) - log_total)  # torch's (x - max) - log(sum)
    tl.store(norm_ptr + i * 2, peak)
    tl.store(norm_ptr + i * 2 + 1, log_total)
    if entropy:
        # H = log(total) - sum(e * (x - peak)) / total, each span's moment moved to `peak`
        moments = tl.load(span + 2, mask=valid, other=0.0)
        moment = tl.sum((moments + totals * tl.where(live, peaks - peak, 0.0)) * weight, 0)
        tl.store(entropy_ptr + i, log_total - tl.div_rn(moment, total))


@triton.jit
def _grad_kernel(grad_ptr, upstream_ptr, logits_ptr, slots_ptr, targets_ptr, norm_ptr, vocab,
                 stride, grad_stride, inv_temperature, SPAN: tl.constexpr,
                 BLOCK: tl.constexpr):
    """grad of log p(target) w.r.t. the logits: (g onehot - exp(log p) g) / T, as autograd's
    log-softmax backward computes it, then the scaling and the cast. Every row of the
    gradient is written once: zeros where the row has no target (slot -1)."""
    row = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1)
    slot = tl.load(slots_ptr + row)
    cols0 = tl.arange(0, BLOCK)
    end = tl.minimum(part * SPAN + SPAN, vocab)
    out = grad_ptr + row * grad_stride
    if slot < 0:
        for first in range(part * SPAN, end, BLOCK):
            cols = first + cols0
            tl.store(out + cols, tl.zeros([BLOCK], grad_ptr.dtype.element_ty), mask=cols < end)
    else:
        target = tl.load(targets_ptr + slot)
        g = tl.load(upstream_ptr + slot)
        peak = tl.load(norm_ptr + slot * 2)
        log_total = tl.load(norm_ptr + slot * 2 + 1)
        for first in range(part * SPAN, end, BLOCK):
            cols = first + cols0
            x = _scaled(logits_ptr + row * stride, cols, end, inv_temperature)
            d = (tl.where(cols == target, g, 0.0) - tl.exp((x - peak) - log_total) * g) \
                * inv_temperature
            tl.store(out + cols, d.to(grad_ptr.dtype.element_ty), mask=cols < end)


def _check_logits(logits: torch.Tensor, caller: str) -> None:
    if logits.dim() != 2 or logits.stride(1) != 1 or not logits.is_floating_point() \
            or logits.shape[1] == 0:
        raise ValueError(f"{caller}: logits {logits.dtype} {tuple(logits.shape)} strides "
                         f"{logits.stride()}; pass [rows, vocab] floating-point logits with "
                         f"unit stride along a non-empty vocabulary")


def _check_rows(caller: str, rows: torch.Tensor, targets: torch.Tensor,
                upstream: torch.Tensor = None) -> None:
    """One row index, target (and upstream gradient) each: the kernels read them by count."""
    shapes = [tuple(t.shape) for t in (rows, targets, upstream) if t is not None]
    if rows.dim() != 1 or len(set(shapes)) != 1:
        raise ValueError(f"{caller}: rows, targets{', upstream' if upstream is not None else ''}"
                         f" of shapes {shapes}; pass one of each per scored token, 1-D")


def inverse_temperature(temperature: float) -> float:
    """fp32(1 / T), the factor the kernels scale logits by."""
    if not 0 < temperature < float("inf"):
        raise ValueError(f"temperature {temperature}: the sampler's and the learner's "
                         f"softmax(logits / T) needs a finite T > 0")
    return float(np.float32(1.0 / temperature))


def _unit_rows(logits: torch.Tensor) -> torch.Tensor:
    """Rows `vocab` apart: Triton specializes a kernel on its integer arguments' divisibility,
    so the engine's [B, L, V][:, -1] view and the learner's [N, V] logits must pass the same
    stride to run the same binary."""
    return logits if logits.stride(0) == logits.shape[1] else logits.contiguous()


def _parts(vocab: int) -> Tuple[int, int]:
    parts = triton.cdiv(vocab, SPAN)
    return parts, triton.next_power_of_2(parts)


def _rows_pass(logits, rows, tokens, temperature, with_entropy, seed=None):
    """The two launches: span statistics (with the race when `seed` is given), then a row's
    combination. Returns (tokens, logprobs, entropy, norm [M, 2] = (max, log sum))."""
    count, device = rows.shape[0], logits.device
    parts, parts_pow2 = _parts(logits.shape[1])
    race = seed is not None
    f32 = dict(dtype=torch.float32, device=device)
    stats = torch.empty(count, parts, 3, **f32)
    keys = torch.empty(count, parts, **f32)
    index = torch.empty(count, parts, dtype=torch.int32, device=device)
    if race:
        tokens = torch.empty(count, dtype=torch.int64, device=device)
    else:
        seed = torch.zeros(1, dtype=torch.int64, device=device)
    logprobs = torch.empty(count, **f32)
    entropy = torch.empty(count, **f32)
    norm = torch.empty(count, 2, **f32)
    inv, stride = inverse_temperature(temperature), logits.stride(0)
    if count:
        _span_kernel[(count, parts)](logits, rows, seed, stats, keys, index, logits.shape[1],
                                     stride, inv, int(race), SPAN=SPAN, BLOCK=BLOCK)
        _row_kernel[(count,)](stats, keys, index, logits, rows, tokens, logprobs, entropy,
                              norm, parts, logits.shape[1], stride, inv, int(race),
                              int(with_entropy), PARTS=parts_pow2)
    return tokens, logprobs, entropy if with_entropy else entropy[:0], norm


def token_logprobs_forward(logits: torch.Tensor, rows: torch.Tensor, targets: torch.Tensor,
                           temperature: float, with_entropy: bool
                           ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """logits [N, V]; rows [M] (distinct); targets [M] -> (log p(target) [M], entropy [M] or
    empty, norm [M, 2] for the backward), all fp32, of softmax(logits[rows].float() / T)
    (scaled by inverse_temperature(T))."""
    _check_logits(logits, "token_logprobs")
    _check_rows("token_logprobs", rows, targets)
    _, logprobs, entropy, norm = _rows_pass(_unit_rows(logits), rows.long().contiguous(),
                                            targets.long().contiguous(), temperature,
                                            with_entropy)
    return logprobs, entropy, norm


def token_logprobs_backward(upstream: torch.Tensor, logits: torch.Tensor, rows: torch.Tensor,
                            targets: torch.Tensor, temperature: float, norm: torch.Tensor
                            ) -> torch.Tensor:
    """d(sum upstream * log p(target)) / d logits: [N, V] in the logits' dtype, zero outside
    `rows`."""
    _check_rows("token_logprobs_backward", rows, targets, upstream)
    logits = _unit_rows(logits)
    grad = torch.empty_like(logits)
    slots = torch.full((logits.shape[0],), -1, dtype=torch.int64, device=logits.device)
    slots[rows] = torch.arange(rows.shape[0], device=logits.device)
    parts, _ = _parts(logits.shape[1])
    if logits.shape[0]:
        _grad_kernel[(logits.shape[0], parts)](
            grad, upstream.float().contiguous(), logits, slots, targets.long().contiguous(),
            norm, logits.shape[1], logits.stride(0), grad.stride(0),
            inverse_temperature(temperature), SPAN=SPAN, BLOCK=BLOCK)
    return grad


def sample_with_logprobs(logits: torch.Tensor, temperature: float, generator: torch.Generator
                         ) -> Tuple[torch.Tensor, torch.Tensor]:
    """logits [B, V] -> (tokens [B] int64 drawn from softmax(logits.float() / T), their
    logprobs [B] fp32, as token_logprobs_forward gives them), in one read; the draw consumes
    the generator as race_argmax does."""
    _check_logits(logits, "sample_with_logprobs")
    if logits.shape[0] * logits.shape[1] >= 2**31:
        raise ValueError(f"sample_with_logprobs: {tuple(logits.shape)} logits; the Philox "
                         f"offsets are int32, draw fewer rows at a time")
    seed = torch.randint(2**31 - 1, (1,), generator=generator, device=logits.device)
    rows = torch.arange(logits.shape[0], device=logits.device)
    tokens, logprobs, _, _ = _rows_pass(_unit_rows(logits), rows, None, temperature, False, seed)
    return tokens, logprobs

