"""INT8 W8A8 GEMMs (SGLang `w8a8_int8`), bit-identical to megatron_qarl.quant.int8: per-token
int8 activations x per-output-channel int8 weights, int32 sums on the int8 tensor cores, the
two fp32 scales applied once at the end. Dense and grouped (MoE, tokens sorted by expert)
share one Triton kernel; the per-token quantizer is int8_quantize.py.

The sums are exact (127^2 * K < 2^31 for K < 133,000), so the only roundings are the
quantizer's and the epilogue's, which the kernels do as the reference does: IEEE divisions,
ties away from zero, (acc * x_scale) * w_scale in fp32, one rounding to the output dtype.
"""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.int8 import unpack_activation_rows

from .checks import (check_activation, check_expert_tokens, check_probs, check_tokens_per_expert,
                     counts_on, tile_rows, unit_stride_codes)
from .expert_tiles import program_tile, tile_bound
from .gluon_hopper import sm_count
from .int8_quantize import int8_quantize_activation, int8_quantize_swiglu
from .numerics import INTERPRETED, to_bf16
from .pdl import pdl_on, wait_for_previous_kernel
from .split_k import (DECODE_MAX_ROWS, decode_tiles, k_slice, split_buffers, split_for,
                      split_sum)

#: under the interpreter a K block's sum is an fp32 dot, exact while BLOCK_K * 127^2 < 2^24
_BLOCK_K = 128


@triton.jit(do_not_specialize=["num_experts", "total_rows"])  # batch sizes share a compile
def _int8_gemm_kernel(
    xq_ptr, xs_ptr, wq_ptr, ws_ptr, y_ptr, p_ptr, counts_ptr, partials_ptr, counters_ptr,
    num_experts, total_rows, N, K,
    stride_xm, stride_xsm, stride_we, stride_wn, stride_wse, stride_wsn, stride_ym,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr,
    E_PAD: tl.constexpr, DENSE: tl.constexpr, OUT_BF16: tl.constexpr, HAS_PROBS: tl.constexpr,
    PDL: tl.constexpr, SOFTWARE: tl.constexpr,
):
    """Axis 0: BLOCK_N weight rows; axis 1: BLOCK_M token rows of one expert
    (expert_tiles.program_tile); axis 2: a slice of K (split_k.split_sum adds the slices).
    Rows past the counts are left unwritten. HAS_PROBS: each row's router prob p_ptr[row]
    multiplies it after the scales. PDL: pdl.py."""
    wait_for_previous_kernel(PDL)
    expert, rows, row_mask, offs_n, n_mask, has_rows = program_tile(
        counts_ptr, num_experts, total_rows, N, tl.program_id(1), BLOCK_M, BLOCK_N, E_PAD,
        DENSE)
    e = expert.to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.int32)
    k_lo, k_hi = k_slice(K, has_rows, BLOCK_K, SPLIT_K)
    for kb in range(k_lo, k_hi):
        ks = kb * BLOCK_K + offs_k
        a = tl.load(xq_ptr + rows[:, None].to(tl.int64) * stride_xm + ks[None, :],
                    mask=row_mask[:, None] & (ks[None, :] < K), other=0)
        b = tl.load(wq_ptr + e * stride_we + offs_n[None, :] * stride_wn + ks[:, None],
                    mask=n_mask[None, :] & (ks[:, None] < K), other=0)
        if SOFTWARE:
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32)).to(tl.int32)
        else:
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    if SPLIT_K > 1:
        tile = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
        last, acc = split_sum(acc, partials_ptr, counters_ptr, tile, tl.program_id(2), SPLIT_K)
        if last:
            _epilogue(acc, xs_ptr, ws_ptr, y_ptr, p_ptr, e, rows, row_mask, offs_n, n_mask,
                      stride_xsm, stride_wse, stride_wsn, stride_ym, OUT_BF16, HAS_PROBS,
                      SOFTWARE)
    else:
        _epilogue(acc, xs_ptr, ws_ptr, y_ptr, p_ptr, e, rows, row_mask, offs_n, n_mask,
                  stride_xsm, stride_wse, stride_wsn, stride_ym, OUT_BF16, HAS_PROBS, SOFTWARE)


@triton.jit
def _epilogue(acc, xs_ptr, ws_ptr, y_ptr, p_ptr, e, rows, row_mask, offs_n, n_mask, stride_xsm,
              stride_wse, stride_wsn, stride_ym, OUT_BF16: tl.constexpr, HAS_PROBS: tl.constexpr,
              SOFTWARE: tl.constexpr):
    """(acc * x_scale) * w_scale [* prob] in fp32, one rounding to the output dtype."""
    x_scale = tl.load(xs_ptr + rows * stride_xsm, mask=row_mask, other=0.0)
    w_scale = tl.load(ws_ptr + e * stride_wse + offs_n * stride_wsn, mask=n_mask, other=0.0)
    y = acc.to(tl.float32) * x_scale[:, None] * w_scale[None, :]
    if HAS_PROBS:
        y = y * tl.load(p_ptr + rows, mask=row_mask, other=0.0).to(tl.float32)[:, None]
    if OUT_BF16:
        y = to_bf16(y, SOFTWARE)
    tl.store(y_ptr + rows[:, None].to(tl.int64) * stride_ym + offs_n[None, :], y,
             mask=row_mask[:, None] & n_mask[None, :])


def int8_tiles(rows_per_expert: int) -> tuple:
    """(block_m, block_n, num_warps, num_stages) of a grouped call: the H100 sweep's winners
    (`python -m qarl_kernels.tune --only int8`, docs/benchmarks.md), each within 3% of the best
    tiles of every case it covers."""
    if rows_per_expert <= 8:
        return 16, 64, 4, 4
    if rows_per_expert <= 64:
        return 64, 128, 4, 3
    return 128, 128, 4, 3


#: the most K slices of INT8's 16 x 32 dense tiles: wherever four waves would allow eight
#: (o_proj's 64 column tiles at 1-16 tokens), four are faster: 1.01x on the H100 (round 32's
#: sweep: 7.54-7.56 us against 7.66), 1.12-1.13x on the H200 at 1-8 tokens and 1.02x at 16
#: (docs/kernel_rounds.md rounds 57-58); at no INT8 cell of either sweep did eight win
NARROW_MAX_SPLIT = 4

#: dense calls past split_k.DECODE_MAX_ROWS and up to DENSE_WIDE_ROWS tokens take 64 x 64 tiles
#: of one K slice while those fit WIDE_WAVES waves. H200 sweep at 384 and 512 tokens, the GEMM
#: alone (docs/kernel_rounds.md round 56): 1.24-1.68x the 128 x 128 tiles' speed at o_proj and
#: attention's TP2 halves (192-320 programs); at qkv's 5120 outputs (480-640 programs) the
#: 128 x 128 tiles are the best or within 1.13x of it
DENSE_WIDE_ROWS = 512
WIDE_WAVES = 3


def dense_tiles(rows: int, n: int, k: int, device: torch.device) -> tuple:
    """(block_m, block_n, num_warps, num_stages, split_k) of a dense call (attention's
    projections), which wants more, narrower programs than a grouped one at decode sizes, and
    K split where those are still few: split_k.decode_tiles' to DECODE_MAX_ROWS (16 x 32 tiles
    over four waves, H100 sweep of round 32, in at most NARROW_MAX_SPLIT slices); 64 x 64 tiles
    to DENSE_WIDE_ROWS where they fit WIDE_WAVES waves; else 128 x 128 tiles, K split while one
    wave holds them."""
    k_steps = triton.cdiv(k, _BLOCK_K)
    if rows <= DECODE_MAX_ROWS:
        block_m, block_n, split = decode_tiles(rows, n, k_steps, device, narrow_waves=4,
                                               narrow_max_split=NARROW_MAX_SPLIT)
        return block_m, block_n, 4, 4, split
    if rows <= DENSE_WIDE_ROWS and (device.type != "cuda" or triton.cdiv(n, 64) * triton.cdiv(
            rows, 64) <= WIDE_WAVES * sm_count(device)):
        return 64, 64, 4, 4, 1
    return 128, 128, 8 if rows <= 1024 else 4, 3, split_for(
        triton.cdiv(n, 128) * triton.cdiv(rows, 128), k_steps, device, waves=1, min_steps=4)


def int8_matmul(xq: torch.Tensor, xs: torch.Tensor, qweight, tokens_per_expert=None,
                tiles=None, out_dtype=torch.bfloat16, routed_rows: int = None,
                probs: torch.Tensor = None) -> torch.Tensor:
    """Codes [T, in] and scales [T, 1] (int8_quantize_activation) @ W^T -> [T, out] in bf16
    (fp32 for any other out_dtype): dense for a [out, in] weight, grouped over tokens sorted
    by expert for [E, out, in] with tokens_per_expert. routed_rows: where xq is padded past
    the rows routing is expected to fill, the tiles are chosen for those (checks.tile_rows).
    tiles: (block_m, block_n, num_warps, num_stages[, split_k]); by default dense_tiles for a
    dense call, int8_tiles for a grouped one. probs [T]: each row's router prob, multiplied
    into its fp32 result (fc2)."""
    dense = tokens_per_expert is None
    wq, ws = qweight.data, qweight.scale
    if dense:
        wq, ws = wq.unsqueeze(0), ws.unsqueeze(0)
    num_experts, n, k = wq.shape
    xq = unit_stride_codes(xq, torch.int8, k)
    rows = xq.shape[0]
    out_bf16 = out_dtype == torch.bfloat16
    y = torch.empty(rows, n, device=xq.device,
                    dtype=torch.bfloat16 if out_bf16 else torch.float32)
    if rows == 0:
        return y
    counts = xs if dense else counts_on(xq.device, tokens_per_expert)
    block_m, block_n, num_warps, num_stages, *split = tiles or (
        dense_tiles(rows, n, k, xq.device) if dense
        else int8_tiles(tile_rows(rows, routed_rows) // num_experts))
    row_tiles = triton.cdiv(rows, block_m) if dense else tile_bound(rows, num_experts, block_m)
    grid = (triton.cdiv(n, block_n), row_tiles)
    split_k = split[0] if split else 1
    split_k, partials, counters = split_buffers(split_k, grid[0] * grid[1], block_m * block_n,
                                                torch.int32, y)
    pdl = pdl_on(y.device, rows)
    _int8_gemm_kernel[grid + (split_k,)](
        xq, xs, wq, ws, y, y if probs is None else probs.contiguous(), counts, partials,
        counters, num_experts, rows, n, k,
        xq.stride(0), xs.stride(0), wq.stride(0), wq.stride(1), ws.stride(0), ws.stride(1),
        y.stride(0),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=_BLOCK_K, SPLIT_K=split_k,
        E_PAD=triton.next_power_of_2(num_experts), DENSE=dense, OUT_BF16=out_bf16,
        HAS_PROBS=probs is not None, PDL=pdl, SOFTWARE=INTERPRETED, num_warps=num_warps,
        num_stages=num_stages,
        launch_pdl=pdl)
    return y


def int8_linear(x: torch.Tensor, qweight, tiles=None) -> torch.Tensor:
    """x [..., in] @ W^T for an Int8W8A8 QuantizedWeight [out, in] -> [..., out] in x's dtype."""
    check_activation(x, qweight.in_features)
    x2 = x.reshape(-1, x.shape[-1])
    y = int8_matmul(*int8_quantize_activation(x2), qweight, tiles=tiles, out_dtype=x.dtype)
    return y.reshape(*x.shape[:-1], qweight.out_features).to(x.dtype)


def int8_grouped_linear(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                        tiles=None, probs: torch.Tensor = None) -> torch.Tensor:
    """x [T, in] sorted by expert, Int8W8A8 QuantizedWeight [E, out, in] -> [T, out] in x's
    dtype; rows past the counts' sum (a fixed-size exchange's padding) are left unset. probs:
    as int8_matmul's."""
    check_activation(x, qweight.in_features)
    check_tokens_per_expert(tokens_per_expert, qweight.data.shape[0], x.shape[0])
    check_probs(probs, x.shape[0])
    y = int8_matmul(*int8_quantize_activation(x), qweight, tokens_per_expert, tiles, x.dtype,
                    probs=probs)
    return y.to(x.dtype)


def int8_swiglu_experts(x: torch.Tensor, fc1, fc2, tokens_per_expert: torch.Tensor,
                        probs: torch.Tensor, routed_rows: int = None) -> torch.Tensor:
    """The op registered for the experts' no-grad forward: fc1 (on bf16 tokens, or on uint8
    rows the dispatcher moved quantized), then the SwiGLU writing fc2's INT8 input directly
    (int8_quantize_swiglu), then fc2 with the probs; rows past the counts are left unset.
    routed_rows: as int8_matmul's."""
    check_tokens_per_expert(tokens_per_expert, fc1.data.shape[0], x.shape[0])
    check_expert_tokens(x)
    if x.dtype == torch.uint8:
        xq, xs = unpack_activation_rows(x, fc1.in_features)
    else:
        check_activation(x, fc1.in_features)
        xq, xs = int8_quantize_activation(x)
    h = int8_matmul(xq, xs, fc1, tokens_per_expert, routed_rows=routed_rows)
    return int8_matmul(*int8_quantize_swiglu(h), fc2, tokens_per_expert,
                       routed_rows=routed_rows, probs=probs)


def int8_dequantize(qweight) -> torch.Tensor:
    """bf16(code * channel scale) [..., out, in]: the backward's grad_input operand, rounded to
    bf16 as FP8's is (fp8_dequantize); the STE reference keeps the fp32 product."""
    return (qweight.data * qweight.scale).to(torch.bfloat16)
