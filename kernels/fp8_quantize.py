"""FP8 block quantization in one pass, bit-identical to megatron_qarl.quant.fp8_block:
weights to e4m3 with one fp32 scale_inv per 128x128 block (q = w / scale_inv), activations to
e4m3 with one fp32 scale per token per 128 inputs (scale = max(absmax, 1e-10) * fp32(1/448),
q = x * fp32(448 * rcp(amax)) with Hopper's approximate reciprocal: sgl-kernel's arithmetic,
quant/hopper_reciprocal.py).

The activation scales are written token-major (a transposed view of [K/128, M]) and can be
padded, because that is the layout torch's blockwise scaled_mm takes on Hopper.
"""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.base import QuantizedWeight
from megatron_qarl.quant.fp8_block import (AMAX_EPS, BLOCK, FP8_DTYPE, FP8_MAX, INV_FP8_MAX,
                                          packed_row_bytes, unpack_activation_rows)
from megatron_qarl.quant.hopper_reciprocal import MIN_NORMAL, significand_table

from .checks import (check_swiglu_input, counts_on, nonfinite_counter, raise_if_nonfinite,
                     tile_rows, unit_stride_rows)
from .expert_masters import Masters, expert_offset, master_table
from .expert_tiles import PADDED_GRID_SLACK, routed_row_end
from .numerics import (INTERPRETED, div_by_reciprocal, fp32_constant, max_keeping_nan,
                       round_to_bf16, swiglu_tile, to_e4m3)
from .pdl import pdl_on, wait_for_previous_kernel

_EPS = tl.constexpr(AMAX_EPS)
_MAX = tl.constexpr(FP8_MAX)
_INV_MAX = tl.constexpr(fp32_constant(INV_FP8_MAX))
_MAX_FINITE = tl.constexpr(float(torch.finfo(torch.float32).max))
_MIN_NORMAL = tl.constexpr(MIN_NORMAL)
#: e4m3 rounding in software under the interpreter only: on the GPU the conversion instruction
#: gives the same bits (every bf16 value under a block's max) and the activation quantizer,
#: bound by its instructions rather than its bytes on the H200, takes 0.69-0.76x the time
#: (docs/kernel_rounds.md, round 41)
_SOFTWARE_E4M3 = tl.constexpr(INTERPRETED)


@triton.jit
def _multiplier_of(amax, rcp_ptr, BF16_VALUES: tl.constexpr):
    """fp32(448 * rcp(amax)) of amax >= 1e-10 (quant.fp8_block.activation_multiplier). Of bf16
    values on the GPU rcp is the instruction itself, rcp.approx.ftz.f32, which the table holds
    (tests/kernels/test_sgl_kernel_fp8_codes.py): a gather from the table added 0.1-0.2 us at
    1-256 rows (H200, round 63). Elsewhere the reciprocal of a bf16 amax is its significand's
    entry of the table at rcp_ptr scaled by 2**-exponent, that of any other amax (fp32 values,
    the 1e-10 floor) the correctly rounded one."""
    if BF16_VALUES and not _SOFTWARE_E4M3:
        rcp = tl.inline_asm_elementwise("rcp.approx.ftz.f32 $0, $1;", "=r,r", [amax],
                                        dtype=tl.float32, is_pure=True, pack=1)
        return rcp * _MAX
    bits = amax.to(tl.int32, bitcast=True)
    exponent = (bits >> 23) & 0xFF
    pow2 = tl.where(exponent < 254, (254 - exponent) << 23, 0).to(tl.float32, bitcast=True)
    rcp = tl.load(rcp_ptr + ((bits >> 16) & 0x7F)) * pow2
    rcp = tl.where(rcp < _MIN_NORMAL, 0.0, rcp)
    return tl.where((bits & 0xFFFF) == 0, rcp, tl.div_rn(1.0, amax)) * _MAX


@triton.jit
def _e4m3(v, scale, BF16_VALUES: tl.constexpr):
    """v / scale to saturated e4m3 (the weight codes). For bf16 values (BF16_VALUES)
    div_by_reciprocal gives the IEEE division's quotient in a fifth of the instructions (the
    weight quantizer from bf16 masters 0.75x its time for W13; round 48). An inf scale takes
    the largest float in the correction: with its reciprocal 0 the quotient is still the
    division's (+-0, NaN for an inf v), so no block-wide check of the amaxes is needed (round
    50). A NaN scale gives NaN but for zero v."""
    if BF16_VALUES:
        x = div_by_reciprocal(v, tl.minimum(scale, _MAX_FINITE), tl.div_rn(1.0, scale), True,
                              _SOFTWARE_E4M3)
    else:
        x = tl.div_rn(v, scale)
    return to_e4m3(tl.minimum(tl.maximum(x, -_MAX), _MAX), _SOFTWARE_E4M3)


@triton.jit
def _fp8_weight_kernel(w_ptr, offsets_ptr, q_ptr, s_ptr, N, K, stride_se, stride_sn,
                       BLOCK: tl.constexpr, ALIGN: tl.constexpr):
    """A block of expert e's master (expert_masters' table). Its NaN or inf reaches its scale
    (a NaN-propagating max, max.NaN: no extra instruction), where the wrapper counts them.
    H200 (round 44): 0.98-0.99x the time of this kernel without a check, 1.03-1.08x with the
    wrapper's count; a flag from the amax (NaN taken as inf, an atomic) took 1.04-1.26x.
    Where the masters lie does not move its time: W2 stacked, one allocation an expert and
    Megatron DDP's buffer 181 us each in CUDA graphs, 164-165 under Nsight Compute (H200,
    round 49; rounds 47-48's 1.1-2x spread was do_bench timing the host)."""
    pid_n, pid_k, e = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    offs_k = pid_k * BLOCK + tl.arange(0, BLOCK)
    mask = (offs_n[:, None] < N) & (offs_k[None, :] < K)
    block = offs_n[:, None].to(tl.int64) * K + offs_k[None, :]
    w = tl.load(w_ptr + expert_offset(offsets_ptr, e, ALIGN) + block, mask=mask,
                other=0.0).to(tl.float32)
    amax = tl.reduce(tl.reduce(tl.abs(w), 1, max_keeping_nan), 0, max_keeping_nan)
    scale = tl.maximum(amax, _EPS, propagate_nan=tl.PropagateNan.ALL) * _INV_MAX
    tl.store(q_ptr + e.to(tl.int64) * N * K + block,
             _e4m3(w, scale, w_ptr.dtype.element_ty == tl.bfloat16), mask=mask)
    tl.store(s_ptr + e * stride_se + pid_n * stride_sn + pid_k, scale)


@triton.jit
def _block_columns(offs_b, BLOCK: tl.constexpr):
    """The columns [1, blocks, BLOCK] of 128-input blocks offs_b."""
    return offs_b[None, :, None] * BLOCK + tl.arange(0, BLOCK)[None, None, :]


@triton.jit
def _store_activation_blocks(q_ptr, s_ptr, rcp_ptr, x, offs_r, offs_b, rows_out, K, stride_qm,
                             stride_sm, stride_sk, BLOCK: tl.constexpr, BF16_VALUES: tl.constexpr):
    """Token rows' 128-input blocks x [rows, blocks, 128] (fp32; BF16_VALUES: bf16 values) to
    e4m3 codes and a scale a row and block; rows in [rows, rows_out) pad for scaled_mm: zeros
    with the eps scale."""
    amax = tl.maximum(tl.max(tl.abs(x), 2), _EPS)
    scale = amax * _INV_MAX
    codes = x * _multiplier_of(amax, rcp_ptr, BF16_VALUES)[:, :, None]
    offs_k = _block_columns(offs_b, BLOCK)
    out = offs_r < rows_out
    tl.store(q_ptr + offs_r[:, None, None].to(tl.int64) * stride_qm + offs_k,
             to_e4m3(tl.minimum(tl.maximum(codes, -_MAX), _MAX), _SOFTWARE_E4M3),
             mask=out[:, None, None] & (offs_k < K))
    tl.store(s_ptr + offs_r[:, None] * stride_sm + offs_b[None, :] * stride_sk, scale,
             mask=out[:, None] & (offs_b[None, :] * BLOCK < K))


@triton.jit
def _activation_rows(x_ptr, q_ptr, s_ptr, rcp_ptr, blk, pid_b, rows, rows_out, K, stride_xm,
                     stride_qm, stride_sm, stride_sk, BLOCK_R: tl.constexpr,
                     BLOCKS: tl.constexpr, BLOCK: tl.constexpr):
    offs_r = blk * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_b = pid_b * BLOCKS + tl.arange(0, BLOCKS)
    offs_k = _block_columns(offs_b, BLOCK)
    x = tl.load(x_ptr + offs_r[:, None, None].to(tl.int64) * stride_xm + offs_k,
                mask=(offs_r[:, None, None] < rows) & (offs_k < K), other=0.0)
    _store_activation_blocks(q_ptr, s_ptr, rcp_ptr, x.to(tl.float32), offs_r, offs_b, rows_out,
                             K, stride_qm, stride_sm, stride_sk, BLOCK,
                             BF16_VALUES=x_ptr.dtype.element_ty == tl.bfloat16)


@triton.jit
def _fp8_activation_kernel(x_ptr, q_ptr, s_ptr, rcp_ptr, counts_ptr, num_experts, rows, rows_out, K,
                           stride_xm, stride_qm, stride_sm, stride_sk,
                           BLOCK_R: tl.constexpr, BLOCKS: tl.constexpr, BLOCK: tl.constexpr,
                           E_PAD: tl.constexpr, ROUTED: tl.constexpr, PDL: tl.constexpr):
    """BLOCK_R rows x BLOCKS 128-input blocks a program, a row block's programs adjacent.
    ROUTED: rows past the counts' sum are padding the grouped GEMM skips: left unwritten.
    The row programs walk on over the routed row blocks (the grid may cover fewer, see
    _row_programs): masking the padding instead cost more than quantizing it. PDL: pdl.py."""
    wait_for_previous_kernel(PDL)
    block_programs = tl.cdiv(K, BLOCK * BLOCKS)
    pid_r, pid_b = tl.program_id(0) // block_programs, tl.program_id(0) % block_programs
    if ROUTED:
        rows = routed_row_end(counts_ptr, num_experts, rows, E_PAD)
        for blk in range(pid_r, tl.cdiv(rows, BLOCK_R), tl.num_programs(0) // block_programs):
            _activation_rows(x_ptr, q_ptr, s_ptr, rcp_ptr, blk, pid_b, rows, rows, K, stride_xm,
                             stride_qm, stride_sm, stride_sk, BLOCK_R, BLOCKS, BLOCK)
    else:
        _activation_rows(x_ptr, q_ptr, s_ptr, rcp_ptr, pid_r, pid_b, rows, rows_out, K, stride_xm,
                         stride_qm, stride_sm, stride_sk, BLOCK_R, BLOCKS, BLOCK)


@triton.jit
def _swiglu_rows(h_ptr, q_ptr, s_ptr, rcp_ptr, blk, pid_b, rows, F, stride_hm, stride_sm,
                 stride_sk, BLOCK_R: tl.constexpr, BLOCKS: tl.constexpr, BLOCK: tl.constexpr,
                 SOFTWARE: tl.constexpr):
    offs_r = blk * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_b = pid_b * BLOCKS + tl.arange(0, BLOCKS)
    act, _ = swiglu_tile(h_ptr, offs_r[:, None, None], _block_columns(offs_b, BLOCK), rows, F,
                         stride_hm, SOFTWARE)
    _store_activation_blocks(q_ptr, s_ptr, rcp_ptr, round_to_bf16(act, SOFTWARE), offs_r, offs_b,
                             rows, F, F, stride_sm, stride_sk, BLOCK, BF16_VALUES=True)


@triton.jit
def _fp8_swiglu_kernel(h_ptr, q_ptr, s_ptr, rcp_ptr, counts_ptr, num_experts, rows, F, stride_hm,
                       stride_sm, stride_sk, BLOCK_R: tl.constexpr, BLOCKS: tl.constexpr,
                       BLOCK: tl.constexpr, E_PAD: tl.constexpr, ROUTED: tl.constexpr,
                       PDL: tl.constexpr, SOFTWARE: tl.constexpr):
    """h = [gate | up] [rows, 2F] -> the FP8 codes and scales of bf16(silu(gate) * up);
    programs, the ROUTED walk and PDL as _fp8_activation_kernel's."""
    wait_for_previous_kernel(PDL)
    block_programs = tl.cdiv(F, BLOCK * BLOCKS)
    pid_r, pid_b = tl.program_id(0) // block_programs, tl.program_id(0) % block_programs
    if ROUTED:
        rows = routed_row_end(counts_ptr, num_experts, rows, E_PAD)
        for blk in range(pid_r, tl.cdiv(rows, BLOCK_R), tl.num_programs(0) // block_programs):
            _swiglu_rows(h_ptr, q_ptr, s_ptr, rcp_ptr, blk, pid_b, rows, F, stride_hm, stride_sm,
                         stride_sk, BLOCK_R, BLOCKS, BLOCK, SOFTWARE)
    else:
        _swiglu_rows(h_ptr, q_ptr, s_ptr, rcp_ptr, pid_r, pid_b, rows, F, stride_hm, stride_sm,
                     stride_sk, BLOCK_R, BLOCKS, BLOCK, SOFTWARE)


def fp8_block_quantize(weight: Masters, scheme, name: str = "weight",
                       check_finite: bool = True,
                       nonfinite: torch.Tensor = None) -> QuantizedWeight:
    """Master weight [..., out, in], or one [out, in] master an expert (read in place,
    expert_masters) -> e4m3 [..., out, in] + fp32 scale_inv [..., ceil(out/128), ceil(in/128)];
    equal to FP8Block.quantize_weight of the stacked masters. check_finite: raise (one host
    sync) if the weight has NaN/inf, found in its block scales (the count is of blocks); with
    False their codes are unspecified. nonfinite: an int32 [1] to add that count to instead of
    raising (the caller checks it; quant.ops.quantize_weight)."""
    masters = master_table(weight, name)
    shape, device = masters.shape, masters.base.device
    n, k = shape[-2:]
    nb, kb = triton.cdiv(n, BLOCK), triton.cdiv(k, BLOCK)
    q = torch.empty(shape, device=device, dtype=FP8_DTYPE)
    scale = torch.empty(*shape[:-2], nb, kb, device=device, dtype=torch.float32)
    counter = nonfinite_counter(masters.base, nonfinite)
    if q.numel():
        s3 = scale.reshape(-1, nb, kb)
        _fp8_weight_kernel[(nb, kb, masters.experts)](
            masters.base, masters.offsets, q, s3, n, k, s3.stride(0), s3.stride(1), BLOCK=BLOCK,
            ALIGN=masters.align, num_warps=8)
        counter += (~torch.isfinite(scale)).sum(dtype=torch.int32)
    if check_finite and nonfinite is None:
        raise_if_nonfinite(name, weight, counter)
    return QuantizedWeight(q, scale, tuple(shape), scheme)


def _routed(counts: torch.Tensor, x: torch.Tensor) -> dict:
    """The kernels' arguments for counts (rows past their sum left unwritten), or for none
    (x stands in for the unread pointer)."""
    if counts is None:
        return dict(counts_ptr=x, num_experts=0, E_PAD=1, ROUTED=False)
    return dict(counts_ptr=counts_on(x.device, counts), num_experts=counts.numel(),
                E_PAD=triton.next_power_of_2(counts.numel()), ROUTED=True)


#: rows up to which a row quantizer's program takes one row with one warp. H100, CUDA graphs
#: of 10 calls (session 37, docs/kernel_rounds.md round 33): at 1-8 rows the 16-row programs
#: took 3.6-3.8 us (activations, packed rows) and 6.1-6.3 us (the SwiGLU's), one-row programs
#: 1.4-1.9 us; at 16-32 rows 2.1 and 2.8 us against 1.7-2.0; past 32 rows 16-row programs win
ONE_ROW_PROGRAMS = 32


def _row_block(rows: int, block_rows) -> tuple:
    """(rows a program, warps) of the row quantizers for `rows` rows (block_rows: forced)."""
    if block_rows is None:
        block_rows = 1 if rows <= ONE_ROW_PROGRAMS else 16
    return block_rows, 1 if block_rows <= 2 else 4


def _row_programs(rows: int, block_rows: int, counts, routed_rows) -> int:
    """A quantizer grid's row programs: one a row block, or, where x is padded past
    routed_rows, enough for PADDED_GRID_SLACK x routed_rows, walking on over any further
    routed blocks (thousands of programs that find no rows cost as much as the quantizer)."""
    if routed_rows is None:
        return triton.cdiv(rows, block_rows)
    if counts is None:
        raise ValueError("routed_rows needs counts: the kernels walk the rows up to the counts' "
                         "sum; pass the grouped GEMM's tokens per expert as counts=")
    bound = PADDED_GRID_SLACK * tile_rows(rows, routed_rows)
    return triton.cdiv(min(rows, bound), block_rows)


#: rows from which the activation quantizer's 16-row programs take two 128-input blocks of
#: bf16 values, not one. H200, CUDA graphs of 10 calls (round 50), two blocks' time over one's:
#: 0.93-0.99x at 2048-4096 rows of K 768-4096, 0.93x at 32768 rows of K 2048; 1.03x at 1024
#: rows of K 768 and 2048 (0.975x of K 4096), 0.99-1.03x at 512, 1.03-1.08x at 64-256; fp32
#: values 1.01-1.27x, the SwiGLU's gate and up 1.15-1.31x (so both keep one block)
TWO_BLOCK_ROWS = 2048


def _row_grid(rows: int, k: int, block_rows: int, blocks: int, counts, routed_rows) -> tuple:
    """A row quantizer's 1-D grid: row programs (_row_programs) x programs a row block."""
    return (_row_programs(rows, block_rows, counts, routed_rows)
            * triton.cdiv(k, BLOCK * blocks),)


def _quantize_rows(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor, rows_out: int,
                   block_rows, counts: torch.Tensor = None, routed_rows: int = None):
    """Launches the activation quantizer: x [rows, K] into codes q [rows_out, K] and scales
    [rows_out, ceil(K/128)] (any strides)."""
    rows, k = x.shape
    x = unit_stride_rows(x)
    expected_rows = tile_rows(rows_out, routed_rows)
    block_rows, warps = _row_block(expected_rows, block_rows)
    blocks = 2 if expected_rows >= TWO_BLOCK_ROWS and x.element_size() == 2 else 1
    pdl = pdl_on(x.device, rows_out)
    _fp8_activation_kernel[_row_grid(rows_out, k, block_rows, blocks, counts, routed_rows)](
        x, q, scale, significand_table(x.device), rows=rows, rows_out=rows_out, K=k,
        stride_xm=x.stride(0), stride_qm=q.stride(0), stride_sm=scale.stride(0),
        stride_sk=scale.stride(1), BLOCK_R=block_rows, BLOCKS=blocks, BLOCK=BLOCK, PDL=pdl,
        num_warps=warps, launch_pdl=pdl, **_routed(counts, x))


def fp8_quantize_activation(x: torch.Tensor, pad_rows_to: int = 1, pad_blocks_to: int = 1,
                            block_rows: int = None, counts: torch.Tensor = None,
                            routed_rows: int = None):
    """x [M, K] -> (e4m3 [M', K], fp32 scales [M', KB'] as a token-major view).

    M' = M rounded up to pad_rows_to (extra rows are zeros), KB' = ceil(K/128) rounded up to
    pad_blocks_to (extra scale columns are zeros); rows < M equal
    megatron_qarl.quant.fp8_block.quantize_activation bit for bit. counts: a grouped GEMM's
    tokens per expert where x is padded past their sum (a fixed-size exchange): the rows past
    it are left unwritten, since the GEMM skips them.
    """
    if x.dim() != 2:
        raise ValueError(f"x: shape {tuple(x.shape)}; flatten the activations to [tokens, in]")
    rows, k = x.shape
    rows_out = triton.cdiv(rows, pad_rows_to) * pad_rows_to
    kb = triton.cdiv(k, BLOCK)
    kb_out = triton.cdiv(kb, pad_blocks_to) * pad_blocks_to
    q = torch.empty(rows_out, k, device=x.device, dtype=FP8_DTYPE)
    alloc = torch.zeros if kb_out > kb else torch.empty
    scale_t = alloc(kb_out, rows_out, device=x.device, dtype=torch.float32)
    if rows_out and k:
        _quantize_rows(x, q, scale_t.t(), rows_out, block_rows, counts, routed_rows)
    return q, scale_t.t()


def fp8_quantize_packed_rows(x: torch.Tensor, block_rows: int = None) -> torch.Tensor:
    """Tokens [T, H] -> uint8 [T, packed_row_bytes(H)] in one pass: codes and scales of each
    token in its own row (quant.fp8_block.pack_activation_rows; padding bytes undefined), for
    the MoE dispatcher to move quantized tokens (layers.token_dispatch)."""
    if x.dim() != 2:
        raise ValueError(f"x: shape {tuple(x.shape)}; flatten the tokens to [tokens, hidden]")
    rows, k = x.shape
    packed = torch.empty(rows, packed_row_bytes(k), device=x.device, dtype=torch.uint8)
    _, scale = unpack_activation_rows(packed, k)
    if rows and k:
        _quantize_rows(x, packed.view(FP8_DTYPE), scale, rows, block_rows)
    return packed


def fp8_quantize_swiglu(h: torch.Tensor, block_rows: int = None, counts: torch.Tensor = None,
                        routed_rows: int = None):
    """MoE experts' activation straight to fc2's FP8 input: h = [gate | up] [T, 2F] bf16
    (fc1's output) -> (e4m3 [T, F], fp32 scales [T, ceil(F/128)] token-major), bit for bit
    fp8_quantize_activation(quant.ops.reference_gated_activation(h)) on the GPU. One pass
    instead of torch's silu, its product, the casts and the quantizer's re-read. counts,
    routed_rows: as fp8_quantize_activation's (rows past the counts' sum left unwritten)."""
    check_swiglu_input(h)
    rows, ffn = h.shape[0], h.shape[1] // 2
    kb = triton.cdiv(ffn, BLOCK)
    q = torch.empty(rows, ffn, device=h.device, dtype=FP8_DTYPE)
    scale_t = torch.empty(kb, rows, device=h.device, dtype=torch.float32)
    if rows and ffn:
        h = unit_stride_rows(h)
        block_rows, warps = _row_block(tile_rows(rows, routed_rows), block_rows)
        pdl = pdl_on(h.device, rows)
        _fp8_swiglu_kernel[_row_grid(rows, ffn, block_rows, 1, counts, routed_rows)](
            h, q, scale_t, significand_table(h.device), rows=rows, F=ffn, stride_hm=h.stride(0),
            stride_sm=scale_t.stride(1), stride_sk=scale_t.stride(0), BLOCK_R=block_rows,
            BLOCKS=1, BLOCK=BLOCK,
            PDL=pdl, SOFTWARE=INTERPRETED, num_warps=warps, launch_pdl=pdl,
            **_routed(counts, h))
    return q, scale_t.t()
