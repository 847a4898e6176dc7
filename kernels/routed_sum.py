"""The MoE combine: each token's top-k expert rows summed in one pass, without atomics.

Megatron's unfused combine adds the permuted rows into a zeroed output with `scatter_add_`:
bf16 atomics, whose order (and so the result) changes from run to run, and slow on the
H100 (14 us at 64 tokens, 1.03 ms at 16384, top-8, hidden 2048). With torch's deterministic
algorithms it takes `index_add_`'s sorting path instead, slower still. Here one program per
token (and hidden block) finds its rows from the routing map, adds them in ascending expert
order in fp32 and rounds once: quant.ops.reference_routed_sum, bit for bit.
"""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.ops import routes_through

from .numerics import INTERPRETED, to_bf16

#: up to this many tokens each program counts the routing map's entries itself (a read of the
#: whole map each: 10.7 against 12.5 us at 64 tokens on the H100, 26.6 against 12.4 at 128);
#: above it, torch's cumsum of the transposed map, two kernels more
COUNT_IN_KERNEL_TOKENS = 64


@triton.jit
def _routed_sum_kernel(rows_ptr, map_ptr, through_ptr, out_ptr, T, E, H, R,
                       stride_through_t, stride_through_e,
                       ROUTES: tl.constexpr, E_BLOCK: tl.constexpr, BLOCK_H: tl.constexpr,
                       COUNT_IN_KERNEL: tl.constexpr, T_CHUNK: tl.constexpr,
                       OUT_BF16: tl.constexpr, SOFTWARE: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    offs_h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    h_mask = offs_h < H
    e = tl.arange(0, E_BLOCK)
    e_mask = e < E
    taken = tl.load(map_ptr + t * E + e, mask=e_mask, other=0).to(tl.int32)
    rank = tl.cumsum(taken, 0) - taken  # a token's routes, in ascending expert order
    if COUNT_IN_KERNEL:  # few tokens: count each expert's rows, and those before t, here
        earlier = tl.zeros([E_BLOCK], tl.int32)
        per_expert = tl.zeros([E_BLOCK], tl.int32)
        for t0 in range(0, T, T_CHUNK):
            ts = t0 + tl.arange(0, T_CHUNK)
            tile = tl.load(map_ptr + ts[:, None].to(tl.int64) * E + e[None, :],
                           mask=(ts[:, None] < T) & e_mask[None, :], other=0).to(tl.int32)
            per_expert += tl.sum(tile, 0)
            earlier += tl.sum(tl.where(ts[:, None] < t, tile, 0), 0)
        row_of = tl.cumsum(per_expert, 0) - per_expert + earlier
    else:
        row_of = tl.load(through_ptr + t * stride_through_t + e * stride_through_e,
                         mask=taken > 0, other=1) - 1
    acc = tl.zeros([BLOCK_H], tl.float32)
    for r in tl.static_range(ROUTES):
        chosen = (taken > 0) & (rank == r)
        row = tl.sum(tl.where(chosen, row_of, 0), 0).to(tl.int64)
        present = h_mask & (offs_h * 0 + tl.sum(chosen.to(tl.int32), 0) > 0)
        present &= offs_h * 0 + row < R  # a map with more entries than rows: not past them
        acc += tl.load(rows_ptr + row * H + offs_h, mask=present, other=0.0).to(tl.float32)
    if OUT_BF16:
        out = to_bf16(acc, SOFTWARE)
    else:
        out = acc.to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + t * H + offs_h, out, mask=h_mask)


def routed_sum(rows: torch.Tensor, routing_map: torch.Tensor, routes: int,
               block_h: int = 1024, count_tokens: int = COUNT_IN_KERNEL_TOKENS) -> torch.Tensor:
    """[T, hidden]: quant.ops.reference_routed_sum of rows [R, hidden] in Megatron's
    permutation of routing_map [T, E]; no token may have more than `routes` entries. Up to
    `count_tokens` tokens the kernel counts the map's entries itself; above, torch scans it."""
    if routing_map.dim() != 2 or routing_map.dtype != torch.bool:
        raise ValueError(f"routing_map: {routing_map.dtype} of shape {tuple(routing_map.shape)};"
                         f" pass the [tokens, experts] bool map the rows were permuted by")
    if rows.dim() != 2:
        raise ValueError(f"rows: shape {tuple(rows.shape)}; pass the permuted rows as "
                         f"[routed rows, hidden]")
    tokens, experts = routing_map.shape
    hidden = rows.shape[-1]
    rows, routing_map = rows.contiguous(), routing_map.contiguous()
    out = torch.empty(tokens, hidden, dtype=rows.dtype, device=rows.device)
    if tokens == 0:
        return out
    if rows.shape[0] == 0:
        return out.zero_()
    count_in_kernel = tokens <= count_tokens
    through = routing_map if count_in_kernel else routes_through(routing_map)  # unread if so
    block_h = min(block_h, triton.next_power_of_2(hidden))
    _routed_sum_kernel[(tokens, triton.cdiv(hidden, block_h))](
        rows, routing_map.view(torch.uint8), through, out, tokens, experts, hidden,
        rows.shape[0], through.stride(0), through.stride(1),
        ROUTES=routes, E_BLOCK=triton.next_power_of_2(experts), BLOCK_H=block_h,
        COUNT_IN_KERNEL=count_in_kernel, T_CHUNK=16,
        OUT_BF16=rows.dtype == torch.bfloat16, SOFTWARE=INTERPRETED)
    return out
