"""W4A16 GEMM reading packed int4 codes directly: y = x @ dequant(W)^T, dense or grouped.

Each weight element becomes bf16((nibble - 8) * scale), exactly the engine's operand
(megatron_qarl.quant.w4a16), and a bf16 MMA accumulates in fp32. Programs compute the
transposed tile W_tile @ x_tile^T ("swap AB"): the weight rows fill the MMA's wide side,
so decode batches of a few tokens per expert still use full tensor-core tiles while the
kernel streams int4 weights. One K step is one quantization group, so each step needs one
scale per weight row.
"""
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from .checks import check_activation, check_tokens_per_expert, counts_on
from .expert_tiles import expert_tile, tile_bound
from .grouped_mm import grouped_mm, torch_grouped_mm_available
from .numerics import INTERPRETED, mma, to_bf16
from .w4a16_dequantize import w4a16_dequantize


@dataclass(frozen=True)
class W4A16Config:
    block_m: int  # token rows per program (MMA N side)
    block_n: int  # weight rows per program (MMA M side)
    split_k: int = 1  # K slices summed with fp32 atomics (opt-in: slower in every sweep)
    num_warps: int = 4
    num_stages: int = 3


@triton.jit
def _w4a16_gemm_kernel(
    x_ptr, w_ptr, s_ptr, y_ptr, counts_ptr, num_experts, total_rows, N, K,
    stride_xm, stride_we, stride_wn, stride_se, stride_sn, stride_ym,
    GROUP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    E_PAD: tl.constexpr, DENSE: tl.constexpr, SPLIT_K: tl.constexpr, SOFTWARE: tl.constexpr,
):
    pid_n = tl.program_id(0)
    tile = tl.program_id(1)
    pid_k = tl.program_id(2)
    expert, row_start, row_end = expert_tile(
        counts_ptr, num_experts, total_rows, tile, BLOCK_M, E_PAD, DENSE)
    rows = row_start + tl.arange(0, BLOCK_M)
    row_mask = rows < row_end
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = offs_n < N

    groups = K // GROUP
    per_split = tl.cdiv(groups, SPLIT_K)
    g_lo = pid_k * per_split
    g_hi = tl.minimum(groups, g_lo + per_split)
    g_hi = tl.where(row_start < row_end, g_hi, g_lo)  # tiles past the last expert do nothing

    words = tl.arange(0, GROUP // 8)
    shifts = tl.arange(0, 8) * 4
    offs_k = tl.arange(0, GROUP)
    w_rows = w_ptr + expert.to(tl.int64) * stride_we + offs_n[:, None] * stride_wn
    s_rows = s_ptr + expert.to(tl.int64) * stride_se + offs_n * stride_sn
    x_cols = x_ptr + rows[None, :].to(tl.int64) * stride_xm + offs_k[:, None]

    acc = tl.zeros([BLOCK_N, BLOCK_M], dtype=tl.float32)
    for g in range(g_lo, g_hi):
        packed = tl.load(w_rows + g * (GROUP // 8) + words[None, :], mask=n_mask[:, None],
                         other=0)
        nibbles = (packed[:, :, None] >> shifts[None, None, :]) & 0xF
        q = tl.reshape(nibbles, [BLOCK_N, GROUP]) - 8
        scale = tl.load(s_rows + g, mask=n_mask, other=0.0).to(tl.float32)
        w = to_bf16(q.to(tl.float32) * scale[:, None], SOFTWARE)
        xt = tl.load(x_cols + g * GROUP, mask=row_mask[None, :], other=0.0)
        acc = mma(w, xt, acc, SOFTWARE)

    y_ptrs = y_ptr + rows[None, :].to(tl.int64) * stride_ym + offs_n[:, None]
    mask = row_mask[None, :] & n_mask[:, None]
    if SPLIT_K == 1:
        tl.store(y_ptrs, to_bf16(acc, SOFTWARE), mask=mask)
    else:
        tl.atomic_add(y_ptrs, acc, mask=mask, sem="relaxed")


def default_config(rows: int, num_experts: int, n: int, k: int, group: int) -> W4A16Config:
    """Tiles by tokens per expert, the winners of the H100 sweep in docs/benchmarks.md.

    Split-K (fp32 atomics) measured slower at every swept shape, so it is opt-in only.
    """
    per_expert = max(1, rows // max(1, num_experts))
    if per_expert <= 2:
        return W4A16Config(block_m=16, block_n=64, num_warps=4, num_stages=4)
    if per_expert <= 16:
        return W4A16Config(block_m=32, block_n=128, num_warps=4, num_stages=4)
    if per_expert <= 64:
        return W4A16Config(block_m=64, block_n=128, num_warps=4, num_stages=3)
    return W4A16Config(block_m=128, block_n=128, num_warps=8, num_stages=3)


def _launch(x2, qweight, counts, num_experts, dense, config):
    data, scale = qweight.data, qweight.scale
    group = qweight.scheme.group_size
    n, k = qweight.shape[-2], qweight.shape[-1]
    rows = x2.shape[0]
    if data.dim() == 2:
        data, scale = data.unsqueeze(0), scale.unsqueeze(0)
    cfg = config or default_config(rows, num_experts, n, k, group)
    out_dtype = torch.float32 if cfg.split_k > 1 else x2.dtype
    alloc = torch.zeros if cfg.split_k > 1 else torch.empty
    y = alloc(rows, n, device=x2.device, dtype=out_dtype)
    if rows == 0:
        return y.to(x2.dtype)
    tiles = triton.cdiv(rows, cfg.block_m) if dense else tile_bound(rows, num_experts, cfg.block_m)
    grid = (triton.cdiv(n, cfg.block_n), tiles, cfg.split_k)
    _w4a16_gemm_kernel[grid](
        x2, data, scale, y, counts, num_experts, rows, n, k,
        x2.stride(0), data.stride(0), data.stride(1), scale.stride(0), scale.stride(1),
        y.stride(0),
        GROUP=group, BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n,
        E_PAD=triton.next_power_of_2(num_experts), DENSE=dense, SPLIT_K=cfg.split_k,
        SOFTWARE=INTERPRETED,
        num_warps=cfg.num_warps, num_stages=cfg.num_stages,
    )
    return y.to(x2.dtype)


def _check_bf16(x: torch.Tensor) -> None:
    if x.dtype != torch.bfloat16:
        raise ValueError(
            f"x: dtype {x.dtype}; the W4A16 kernels take bf16 activations (the engine's "
            f"operand dtype): cast with x.to(torch.bfloat16)"
        )


def w4a16_linear(x: torch.Tensor, qweight, config: W4A16Config = None) -> torch.Tensor:
    """x [..., in] bf16 @ W^T for one W4A16 QuantizedWeight [out, in] -> [..., out] bf16."""
    _check_bf16(x)
    check_activation(x, qweight.in_features)
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    y = _launch(x2, qweight, x2, 1, True, config)  # counts unused in dense mode
    return y.reshape(*x.shape[:-1], qweight.out_features)


def w4a16_grouped_matmul(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                         config: W4A16Config = None) -> torch.Tensor:
    """Rows of x [T, in] sorted by expert, counts [E]; qweight [E, out, in] -> [T, out]."""
    _check_bf16(x)
    check_activation(x, qweight.in_features)
    num_experts = qweight.data.shape[0]
    check_tokens_per_expert(tokens_per_expert, num_experts, x.shape[0])
    counts = counts_on(x.device, tokens_per_expert)
    return _launch(x.contiguous(), qweight, counts, num_experts, False, config)


#: tokens per expert from which dequantize + torch._grouped_mm beats the int4-reading kernel
#: (compute-bound regime); measured by qarl_kernels.bench, see docs/benchmarks.md.
DEQUANT_ROWS_PER_EXPERT = 256


def w4a16_grouped_linear(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor):
    """The op registered for W4A16 grouped GEMMs on CUDA: picks the path by tokens/expert."""
    num_experts = qweight.data.shape[0]
    if (x.shape[0] >= DEQUANT_ROWS_PER_EXPERT * num_experts
            and torch_grouped_mm_available(x.device)):
        _check_bf16(x)
        check_activation(x, qweight.in_features)
        check_tokens_per_expert(tokens_per_expert, num_experts, x.shape[0])
        weight = w4a16_dequantize(qweight, tokens_per_expert)
        return grouped_mm(x, weight.transpose(1, 2), tokens_per_expert, use_torch=True)
    return w4a16_grouped_matmul(x, qweight, tokens_per_expert)
