"""INT8 row quantizer, bit-identical to megatron_qarl.quant.int8 (SGLang's per_token_quant_int8
with IEEE divisions): scale = amax / 127, codes round(x * (127 / amax)) with ties away from
zero. One row a program: a token's activations, or an output channel of a master weight. A
row that fits one block is read once, others twice (the second time from L1/L2); tokens take
one block up to ONE_PASS_K values, masters' rows blocks that leave no lane masked.

For the experts' no-grad forward the same kernel quantizes the SwiGLU of fc1's output
directly (fc2's input), as the FP8 path does: one pass instead of torch's gated activation
and a re-read.
"""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.base import QuantizedWeight
from megatron_qarl.quant.int8 import AMAX_EPS, QMAX, packed_row_bytes, unpack_activation_rows

from .checks import check_swiglu_input, nonfinite_counter, raise_if_nonfinite, unit_stride_rows
from .expert_masters import Masters, expert_offset, master_table
from .numerics import (INTERPRETED, is_nonfinite, max_keeping_nan, mul_rn, round_to_bf16,
                       swiglu)
from .pdl import pdl_on, wait_for_previous_kernel

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
def _row_values(x_row, offs, K, SWIGLU: tl.constexpr, SOFTWARE: tl.constexpr):
    """fp32 values of one row's columns offs: the row itself, or for SWIGLU the experts'
    activation of the row [gate | up] (K = ffn), rounded as ops.reference_gated_activation."""
    mask = offs < K
    if SWIGLU:
        gate = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        up = tl.load(x_row + K + offs, mask=mask, other=0.0).to(tl.float32)
        return round_to_bf16(swiglu(gate, up, SOFTWARE), SOFTWARE)
    return tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)


@triton.jit
def _store_codes(q_row, x, inv, offs, K, SOFTWARE: tl.constexpr):
    """No clamp: |x| <= amax and inv = rn(127 / amax) put |rn(x * inv)| below 127.5 (a NaN or
    inf row's codes are unspecified). The product is rounded before its fraction is looked at."""
    q = _round_half_away(mul_rn(x, inv, SOFTWARE))
    tl.store(q_row + offs, q.to(tl.int8), mask=offs < K)


@triton.jit
def _int8_rows_kernel(x_ptr, offsets_ptr, q_ptr, s_ptr, nonfinite_ptr, N, K, stride_xm,
                      stride_qm, stride_sm, BLOCK: tl.constexpr, ONE_PASS: tl.constexpr,
                      TAIL: tl.constexpr, SWIGLU: tl.constexpr, MASTERS: tl.constexpr,
                      ALIGN: tl.constexpr, PDL: tl.constexpr, SOFTWARE: tl.constexpr):
    """Row r of expert e (program (r, e)) to row e * N + r. ONE_PASS (K <= BLOCK + TAIL): the
    row is read once and quantized from registers, its last TAIL values (0: none) a block of
    their own; else read twice, the second time from L1/L2. MASTERS: x
    is expert_masters' table, and the row's NaN/inf values are added to *nonfinite_ptr,
    counted in a second read only where the row's NaN-propagating amax says there are some
    (a count of every value cost the masters' path a quarter of its instructions; round 49).
    PDL: pdl.py (the activations' launches)."""
    wait_for_previous_kernel(PDL)
    row = tl.program_id(0).to(tl.int64)
    e = tl.program_id(1)
    x_row = x_ptr + row * stride_xm
    if MASTERS:
        x_row += expert_offset(offsets_ptr, e, ALIGN)
    row += e.to(tl.int64) * N
    q_row = q_ptr + row * stride_qm
    amax = tl.zeros([BLOCK], dtype=tl.float32)
    x = tl.zeros([BLOCK], dtype=tl.float32)  # after the loop: its last block
    body = K - TAIL
    for k0 in range(0, body, BLOCK):
        x = _row_values(x_row, k0 + tl.arange(0, BLOCK), K, SWIGLU, SOFTWARE)
        if MASTERS:
            amax = max_keeping_nan(amax, tl.abs(x))
        else:
            amax = tl.maximum(amax, tl.abs(x))
    if MASTERS:
        amax = tl.reduce(amax, 0, max_keeping_nan)
        if is_nonfinite(amax) != 0:
            bad = tl.zeros([BLOCK], dtype=tl.int32)
            for k0 in range(0, K, BLOCK):
                bad += is_nonfinite(_row_values(x_row, k0 + tl.arange(0, BLOCK), K, SWIGLU,
                                                SOFTWARE))
            tl.atomic_add(nonfinite_ptr, tl.sum(bad, 0), sem="relaxed")
    else:
        amax = tl.max(amax, 0)
    if TAIL:
        tail = _row_values(x_row, body + tl.arange(0, TAIL), K, SWIGLU, SOFTWARE)
        amax = tl.maximum(amax, tl.max(tl.abs(tail), 0))
    amax = tl.maximum(amax, _EPS)
    inv = tl.div_rn(_QMAX + tl.zeros_like(amax), amax)
    if ONE_PASS:
        _store_codes(q_row, x, inv, tl.arange(0, BLOCK), K, SOFTWARE)
        if TAIL:
            _store_codes(q_row, tail, inv, body + tl.arange(0, TAIL), K, SOFTWARE)
    else:
        for k0 in range(0, K, BLOCK):
            offs = k0 + tl.arange(0, BLOCK)
            _store_codes(q_row, _row_values(x_row, offs, K, SWIGLU, SOFTWARE), inv, offs, K,
                         SOFTWARE)
    tl.store(s_ptr + row * stride_sm, tl.div_rn(amax, _QMAX + tl.zeros_like(amax)))


#: the widest block of a row a program holds; longer rows take two passes. o_proj's rows of
#: 4096 in one pass, not two of 2048: the quantizer 1.12-1.68x faster at 1-4096 tokens, the
#: INT8 op 1.03-1.11x (H200, docs/kernel_rounds.md round 57)
ONE_PASS_K = 4096
#: the widest block of a master's row (_row_program)
MASTERS_BLOCK = 1024
#: the narrowest block a master's row is split into to leave no lane masked
MASTERS_EVEN_BLOCK = 256


def _row_program(x: torch.Tensor, k: int, swiglu_rows: bool, masters: bool = False) -> tuple:
    """(columns a block, tail, warps) for rows of k values: 64 bytes of a row a thread, the SwiGLU's
    8 values (its exp and division bind it). H200, rows of 2048 (768) values, session 46
    (docs/kernel_rounds.md, round 42): bf16 tokens 0.73x (0.71x) the time of the 8 (4) warps
    before, fp32 masters 0.89x (0.88x). A master's rows (a layer's experts: many programs to
    hide the second read) split into the widest power-of-two block up to MASTERS_BLOCK that
    divides k: one Qwen3-30B-A3B layer's bf16 masters (H200, CUDA graphs, round 49) W13 (rows
    of 2048) 0.81x the time of one 2048-value block, W2 (768) three blocks of 256 0.82x one of
    1024 a quarter masked; fp32 W13 1.02x, W2 0.89x. Tokens keep one pass: at decode sizes
    the second read is latency (8 x 2048: 3.6 us against 2.7). A token's row of two powers of
    two (the experts' 768 = 512 + 256) is one pass over a block of each, no lane masked."""
    block = min(triton.next_power_of_2(k), ONE_PASS_K)
    tail = 0
    if masters:
        even = min(k & -k, MASTERS_BLOCK)
        block = even if even >= MASTERS_EVEN_BLOCK else block
    elif k < block and (k - block // 2) & (k - block // 2 - 1) == 0:
        block, tail = block // 2, k - block // 2
    per_thread = 8 if swiglu_rows else 64 // x.element_size()
    return block, tail, max(1, min(8, block // (32 * per_thread)))


def _quantize_rows(x: torch.Tensor, swiglu: bool, k: int, out: tuple = None) -> tuple:
    """out: (codes [M, k], scales [M, 1]) to write, any row strides (packed rows); swiglu: x
    is fc1's [gate | up] [M, 2k], quantized as its activation."""
    m = x.shape[0]
    q, s = out or (torch.empty(m, k, device=x.device, dtype=torch.int8),
                   torch.empty(m, 1, device=x.device, dtype=torch.float32))
    if m and k:
        x = unit_stride_rows(x)
        block, tail, warps = _row_program(x, k, swiglu)
        pdl = pdl_on(x.device, m)
        _int8_rows_kernel[(m, 1)](x, x, q, s, s, m, k, x.stride(0), q.stride(0), s.stride(0),
                                  BLOCK=block, ONE_PASS=k <= block + tail, TAIL=tail,
                                  SWIGLU=swiglu, MASTERS=False,
                                  ALIGN=1, PDL=pdl, SOFTWARE=INTERPRETED, num_warps=warps,
                                  launch_pdl=pdl)
    return q, s


def int8_quantize(weight: Masters, scheme, name: str = "weight",
                  check_finite: bool = True, nonfinite: torch.Tensor = None) -> QuantizedWeight:
    """Master weight [..., out, in], or one [out, in] master an expert (read in place,
    expert_masters) -> Int8W8A8 codes [..., out, in] and fp32 scales [..., out, 1], one pass a
    row: scheme.quantize_weight of the stacked masters bit for bit (the per-step quantizer the
    layers' weight cache calls). check_finite: raise (one host sync) if the weight has NaN/inf;
    with False their codes are unspecified. nonfinite: an int32 [1] the pass adds the count to
    instead of raising (the caller checks it; quant.ops.quantize_weight)."""
    masters = master_table(weight, name)
    shape, device = masters.shape, masters.base.device
    n, k = shape[-2:]
    counter = nonfinite_counter(masters.base, nonfinite)
    q = torch.empty(shape, device=device, dtype=torch.int8)
    s = torch.empty(*shape[:-1], 1, device=device, dtype=torch.float32)
    if q.numel():
        block, tail, warps = _row_program(masters.base, k, False, masters=True)
        _int8_rows_kernel[(n, masters.experts)](
            masters.base, masters.offsets, q, s, counter, n, k, k, k, 1, BLOCK=block,
            ONE_PASS=k <= block + tail, TAIL=tail, SWIGLU=False, MASTERS=True,
            ALIGN=masters.align, PDL=False, SOFTWARE=INTERPRETED, num_warps=warps)
    if check_finite and nonfinite is None:
        raise_if_nonfinite(name, weight, counter)
    return QuantizedWeight(q, s, tuple(shape), scheme)


def int8_quantize_activation(x: torch.Tensor) -> tuple:
    """x [M, K] -> (int8 codes [M, K], fp32 scales [M, 1]): quant.int8.quantize_activation."""
    if x.dim() != 2:  # [M, 1, K] read as K = 1 gave codes the GEMM read K bytes a row of
        raise ValueError(f"x: shape {tuple(x.shape)}; flatten the activations to [tokens, in]")
    return _quantize_rows(x, False, x.shape[1])


def int8_quantize_packed_rows(x: torch.Tensor) -> torch.Tensor:
    """Tokens [T, H] -> uint8 [T, packed_row_bytes(H)] in one pass: each token's codes and
    scale in its own row (quant.int8.pack_activation_rows; padding bytes undefined), for the
    MoE dispatcher to move quantized tokens (layers.token_dispatch)."""
    if x.dim() != 2:
        raise ValueError(f"x: shape {tuple(x.shape)}; flatten the tokens to [tokens, hidden]")
    packed = torch.empty(x.shape[0], packed_row_bytes(x.shape[1]), device=x.device,
                         dtype=torch.uint8)
    _quantize_rows(x, False, x.shape[1], out=unpack_activation_rows(packed, x.shape[1]))
    return packed


def int8_quantize_swiglu(h: torch.Tensor) -> tuple:
    """fc1's output h = [gate | up] [T, 2F] bf16 -> fc2's INT8 input (codes [T, F], scales
    [T, 1]): int8_quantize_activation(ops.reference_gated_activation(h)), bit for bit on the
    GPU (the interpreter's exp is numpy's, not expf)."""
    check_swiglu_input(h)
    return _quantize_rows(h, True, h.shape[1] // 2)
