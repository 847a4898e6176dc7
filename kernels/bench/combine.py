"""The MoE combine: Megatron's scatter_add_ against routed_sum."""
import torch

from megatron_qarl.quant.ops import reference_routed_sum

from ..routed_sum import routed_sum
from .cases import TOP_K
from .measure import graph_us
from .report import Table, fmt, rate_header, rates


def bench_combine(peak, check):
    """The MoE combine (each token's top-8 expert rows summed, hidden 2048, E=128), in CUDA
    graphs: Megatron's unfused combine (scatter_add_ of bf16 atomics; index_add_'s sort under
    torch's deterministic algorithms) against routed_sum, which finds the rows from the
    routing map (its cumsum included) and needs neither."""
    table = Table("MoE combine: Megatron's scatter_add_ vs routed_sum (CUDA graphs)",
                  ["M tokens", "scatter_add_ us", "index_add_ (deterministic) us",
                   "routed_sum us", *rate_header(flops=False), "vs scatter_add_",
                   "vs index_add_"])
    hidden, experts = 2048, 128
    for m in (64, 256, 1024, 4096, 16384):
        scores = torch.rand(m, experts, device="cuda")
        routing_map = torch.zeros(m, experts, dtype=torch.bool, device="cuda").scatter_(
            1, scores.topk(TOP_K, dim=1).indices, True)
        token_of_row = torch.arange(m, device="cuda").expand(experts, m).masked_select(
            routing_map.T.contiguous())  # Megatron's permutation
        rows = torch.randn(m * TOP_K, hidden, device="cuda", dtype=torch.bfloat16)
        check.equal(f"routed_sum M={m}", routed_sum(rows, routing_map, TOP_K),
                    reference_routed_sum(rows, routing_map, TOP_K))
        index = token_of_row[:, None].expand(-1, hidden)
        t_scatter = graph_us([lambda: torch.zeros(m, hidden, dtype=rows.dtype, device="cuda")
                              .scatter_add_(0, index, rows)])
        torch.use_deterministic_algorithms(True)
        try:
            t_index_add = graph_us([lambda: torch.zeros(m, hidden, dtype=rows.dtype,
                                                        device="cuda")
                                    .index_add_(0, token_of_row, rows)])
        finally:
            torch.use_deterministic_algorithms(False)
        t_ours = graph_us([lambda: routed_sum(rows, routing_map, TOP_K)])
        nbytes = (rows.numel() + m * hidden) * rows.element_size()
        table.add(str(m), t_scatter, t_index_add, t_ours, *rates(t_ours, nbytes, peak),
                  fmt(t_scatter / t_ours, ".2f"), fmt(t_index_add / t_ours, ".2f"))
    return [table]
