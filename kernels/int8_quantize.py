"""INT8 row quantizer, bit-identical to megatron_qarl.quant.int8 (SGLang's per_token_quant_int8
with IEEE divisions): scale = amax / 127, codes round(x * (127 / amax)) with ties away from
zero. Rows of up to ONE_PASS_K values are read once, longer ones twice (the second time from
L2): a token's activations, or an output channel of a master weight.

For the experts' no-grad forward the same kernel quantizes the SwiGLU of fc1's output
directly (fc2's input), as the FP8 path does: one pass instead of torch's gated activation
and a re-read.
"""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.base import QuantizedWeight
from megatron_qarl.quant.errors import check_master_weight
from megatron_qarl.quant.int8 import AMAX_EPS, QMAX, packed_row_bytes, unpack_activation_rows

from .checks import check_swiglu_input
from .numerics import INTERPRETED, mul_rn, round_to_bf16, swiglu

_EPS = tl.constexpr(AMAX_EPS)
_QMAX = tl.constexpr(QMAX)


@triton.jit
def _round_half_away(v):
    """Ties away from zero with integer arithmetic (the interpreter maps libdevice.round to
    numpy's, which rounds ties to even): truncation, then the exact fractional part."""
    whole = v.to(tl.int32)
    frac = v - whole.to(tl.float32)
    return whole + (frac >= 0.5).to(tl.int32) - (frac <= -0.5).to(tl.int32)


@triton.jit
def _row_values(x_rows, prob, offs, mask, K, SWIGLU: tl.constexpr, SOFTWARE: tl.constexpr):
    """fp32 values of the rows' columns offs ([R, 1] row pointers, [1, BLOCK] columns): the
    rows themselves, or for SWIGLU the experts' activation of rows [gate | up] (K = ffn),
    rounded as quant.ops.gated_activation."""
    if SWIGLU:
        gate = tl.load(x_rows + offs, mask=mask, other=0.0).to(tl.float32)
        up = tl.load(x_rows + K + offs, mask=mask, other=0.0).to(tl.float32)
        return round_to_bf16(swiglu(gate, up, prob, True, SOFTWARE), SOFTWARE)
    return tl.load(x_rows + offs, mask=mask, other=0.0).to(tl.float32)


@triton.jit
def _store_codes(q_rows, x, inv, offs, mask, SOFTWARE: tl.constexpr):
    # the product rounded before the rounding to an integer looks at its fraction
    q = tl.minimum(tl.maximum(_round_half_away(mul_rn(x, inv[:, None], SOFTWARE)), -127), 127)
    tl.store(q_rows + offs, q.to(tl.int8), mask=mask)


@triton.jit
def _int8_rows_kernel(x_ptr, p_ptr, q_ptr, s_ptr, nonfinite_ptr, M, K, stride_xm, stride_qm,
                      stride_sm, BLOCK_R: tl.constexpr, BLOCK: tl.constexpr,
                      ONE_PASS: tl.constexpr, SWIGLU: tl.constexpr,
                      COUNT_NONFINITE: tl.constexpr, SOFTWARE: tl.constexpr):
    """BLOCK_R rows a program. ONE_PASS (K <= BLOCK): a row is read once and quantized from
    registers; else twice, the second time from L2. COUNT_NONFINITE: add the NaN/inf values
    to *nonfinite_ptr (master weights)."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < M
    x_rows = x_ptr + rows.to(tl.int64)[:, None] * stride_xm
    q_rows = q_ptr + rows.to(tl.int64)[:, None] * stride_qm
    prob = tl.zeros([BLOCK_R, 1], dtype=tl.float32)
    if SWIGLU:
        prob = tl.load(p_ptr + rows, mask=row_mask, other=0.0).to(tl.float32)[:, None]
    amax = tl.zeros([BLOCK_R, BLOCK], dtype=tl.float32)
    bad = tl.zeros([BLOCK_R, BLOCK], dtype=tl.int32)
    x = tl.zeros([BLOCK_R, BLOCK], dtype=tl.float32)  # after the loop: its last block
    for k0 in range(0, K, BLOCK):
        offs = k0 + tl.arange(0, BLOCK)[None, :]
        x = _row_values(x_rows, prob, offs, row_mask[:, None] & (offs < K), K, SWIGLU,
                        SOFTWARE)
        amax = tl.maximum(amax, tl.abs(x))
        if COUNT_NONFINITE:
            bad += ((x != x) | (tl.abs(x) == float("inf"))).to(tl.int32)
    if COUNT_NONFINITE:
        nonfinite = tl.sum(tl.sum(bad, 1), 0)
        tl.atomic_add(nonfinite_ptr, nonfinite, mask=nonfinite > 0, sem="relaxed")
    amax = tl.maximum(tl.max(amax, 1), _EPS)
    inv = tl.div_rn(_QMAX + tl.zeros_like(amax), amax)
    if ONE_PASS:
        offs = tl.arange(0, BLOCK)[None, :]
        _store_codes(q_rows, x, inv, offs, row_mask[:, None] & (offs < K), SOFTWARE)
    else:
        for k0 in range(0, K, BLOCK):
            offs = k0 + tl.arange(0, BLOCK)[None, :]
            mask = row_mask[:, None] & (offs < K)
            _store_codes(q_rows, _row_values(x_rows, prob, offs, mask, K, SWIGLU, SOFTWARE),
                         inv, offs, mask, SOFTWARE)
    tl.store(s_ptr + rows * stride_sm, tl.div_rn(amax, _QMAX + tl.zeros_like(amax)),
             mask=row_mask)


#: the widest row block a program quantizes from registers; longer rows take two passes
ONE_PASS_K = 2048


def row_tiles(k: int) -> tuple:
    """(rows a program, columns a block, warps) of the row quantizer for rows of k values."""
    block = min(triton.next_power_of_2(k), ONE_PASS_K)
    return 1, block, max(1, min(8, block // 256))


def _quantize_rows(x: torch.Tensor, probs, k: int, nonfinite: torch.Tensor = None,
                   out: tuple = None) -> tuple:
    """out: (codes [M, k], scales [M, 1]) to write, any row strides (packed rows)."""
    m = x.shape[0]
    q, s = out or (torch.empty(m, k, device=x.device, dtype=torch.int8),
                   torch.empty(m, 1, device=x.device, dtype=torch.float32))
    if m and k:
        x = x if x.stride(-1) == 1 else x.contiguous()
        block_rows, block, warps = row_tiles(k)
        _int8_rows_kernel[(triton.cdiv(m, block_rows),)](
            x, x if probs is None else probs.contiguous(), q, s,
            s if nonfinite is None else nonfinite, m, k, x.stride(0), q.stride(0), s.stride(0),
            BLOCK_R=block_rows, BLOCK=block, ONE_PASS=k <= block, SWIGLU=probs is not None,
            COUNT_NONFINITE=nonfinite is not None, SOFTWARE=INTERPRETED, num_warps=warps)
    return q, s


def int8_quantize(weight: torch.Tensor, scheme, name: str = "weight",
                  check_finite: bool = True) -> QuantizedWeight:
    """Master weight [..., out, in] -> Int8W8A8 codes [..., out, in] and fp32 scales
    [..., out, 1], one pass a row: scheme.quantize_weight bit for bit (the per-step quantizer
    the layers' weight cache calls). check_finite: raise (one host sync) if the weight has
    NaN/inf; with False their codes are unspecified."""
    check_master_weight(name, weight, check_finite=False)
    nonfinite = torch.zeros(1, device=weight.device, dtype=torch.int32)
    q, s = _quantize_rows(weight.reshape(-1, weight.shape[-1]), None, weight.shape[-1],
                          nonfinite)
    if check_finite and int(nonfinite.item()):
        check_master_weight(name, weight, check_finite=True)  # raises, naming the count
    return QuantizedWeight(q.reshape(weight.shape), s.reshape(*weight.shape[:-1], 1),
                           tuple(weight.shape), scheme)


def int8_quantize_activation(x: torch.Tensor) -> tuple:
    """x [M, K] -> (int8 codes [M, K], fp32 scales [M, 1]): quant.int8.quantize_activation."""
    return _quantize_rows(x, None, x.shape[1])


def int8_quantize_packed_rows(x: torch.Tensor) -> torch.Tensor:
    """Tokens [T, H] -> uint8 [T, packed_row_bytes(H)] in one pass: each token's codes and
    scale in its own row (quant.int8.pack_activation_rows; padding bytes undefined), for the
    MoE dispatcher to move quantized tokens (layers.token_dispatch)."""
    if x.dim() != 2:
        raise ValueError(f"x: shape {tuple(x.shape)}; flatten the tokens to [tokens, hidden]")
    packed = torch.empty(x.shape[0], packed_row_bytes(x.shape[1]), device=x.device,
                         dtype=torch.uint8)
    _quantize_rows(x, None, x.shape[1], out=unpack_activation_rows(packed, x.shape[1]))
    return packed


def int8_quantize_swiglu(h: torch.Tensor, probs: torch.Tensor) -> tuple:
    """fc1's output h = [gate | up] [T, 2F] bf16 and router probs [T] -> fc2's INT8 input
    (codes [T, F], scales [T, 1]): int8_quantize_activation(quant.ops.gated_activation(h,
    probs)), bit for bit on the GPU (the interpreter's exp is numpy's, not expf)."""
    check_swiglu_input(h, probs)
    if probs is None:
        raise ValueError("probs: None; pass the router prob of each row of h (the experts "
                         "scale their output by it)")
    return _quantize_rows(h, probs, h.shape[1] // 2)
