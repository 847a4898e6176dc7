"""bf16 grouped GEMMs over tokens sorted by expert: torch._grouped_mm where it runs, a
per-expert loop elsewhere (it needs the counts on the host: one sync)."""
import torch

from megatron_qarl.quant.base import scale_rows

from .checks import check_activation, check_probs, check_tokens_per_expert


def torch_grouped_mm_available(device: torch.device) -> bool:
    """torch._grouped_mm exists (torch >= 2.8) and runs on this device (CPU, or SM90+)."""
    if not hasattr(torch, "_grouped_mm"):
        return False
    return device.type != "cuda" or torch.cuda.get_device_capability(device) >= (9, 0)


def expert_offsets(tokens_per_expert: torch.Tensor, device: torch.device) -> torch.Tensor:
    """End row of each expert's tokens, int32 on `device` (torch._grouped_mm's `offs`)."""
    return torch.cumsum(tokens_per_expert.to(device), 0, dtype=torch.int32)


def grouped_mm(a: torch.Tensor, b: torch.Tensor, tokens_per_expert: torch.Tensor,
               use_torch: bool = None) -> torch.Tensor:
    """a [T, K] (rows sorted by expert) x b [E, K, N] -> [T, N], rows of expert e times b[e].
    a in any layout (autograd hands the backward expanded or strided gradients; _grouped_mm
    takes unit-stride rows only)."""
    if use_torch is None:
        use_torch = torch_grouped_mm_available(a.device)
    if use_torch:
        return torch._grouped_mm(a.contiguous(), b,
                                 offs=expert_offsets(tokens_per_expert, a.device))
    counts, routed = _host_counts(tokens_per_expert, a.shape[0])
    parts = [ae @ b[e] for e, ae in enumerate(torch.split(a[:routed], counts))]
    return torch.cat([*parts, a.new_zeros(a.shape[0] - routed, b.shape[-1])])


def _host_counts(tokens_per_expert: torch.Tensor, rows: int) -> tuple:
    """(counts as ints, their sum) for the per-expert loop; rows past the sum are a fixed-size
    exchange's padding, which the loop leaves as zeros."""
    counts = [int(c) for c in tokens_per_expert.tolist()]
    if sum(counts) > rows:
        raise ValueError(f"tokens_per_expert sums to {sum(counts)} but x has {rows} rows")
    return counts, sum(counts)


def grouped_weight_grad(grad_out: torch.Tensor, x: torch.Tensor,
                        tokens_per_expert: torch.Tensor, use_torch: bool = None) -> torch.Tensor:
    """Per expert grad_out_e^T @ x_e: grad_out [T, N], x [T, K] -> [E, N, K] (zeros for empty
    experts), in the inputs' dtype with fp32 accumulation."""
    if use_torch is None:
        use_torch = torch_grouped_mm_available(x.device)
    if use_torch:
        return torch._grouped_mm(grad_out.contiguous().t(), x.contiguous(),
                                 offs=expert_offsets(tokens_per_expert, x.device))
    counts, routed = _host_counts(tokens_per_expert, x.shape[0])
    return torch.stack([g.t() @ xe for g, xe in zip(torch.split(grad_out[:routed], counts),
                                                    torch.split(x[:routed], counts))])


def bf16_grouped_linear(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                        probs: torch.Tensor = None) -> torch.Tensor:
    """The op registered for scheme 'none' grouped experts (the bf16 baseline with
    --moe-grouped-gemm) on CUDA: x [T, in] sorted by expert -> [T, out], one torch._grouped_mm
    on the counts as they are on the device, so a decode step can be captured in a CUDA graph
    (Megatron's SequentialMLP splits the rows by host-side counts). Rows past the counts'
    sum (a fixed-size exchange's padding) are left as the GEMM leaves them. probs: each row's
    router prob times the bf16 output, which torch._grouped_mm writes (no epilogue), as a bf16
    product (quant.base.scale_rows after the rounding, NoQuant's spec)."""
    check_activation(x, qweight.in_features)
    check_tokens_per_expert(tokens_per_expert, qweight.data.shape[0], x.shape[0])
    check_probs(probs, x.shape[0])
    y = grouped_mm(x.to(torch.bfloat16), qweight.data.transpose(1, 2), tokens_per_expert)
    return scale_rows(y, probs, y.dtype, after_rounding=True).to(x.dtype)


def _loop_reads_counts() -> bool:
    """Before SM90 torch._grouped_mm does not run and the loop reads the counts on the host,
    so a decode step cannot be captured in a CUDA graph (decode_graph.graph_blocker asks)."""
    return torch.cuda.is_available() and not torch_grouped_mm_available(torch.device("cuda"))


bf16_grouped_linear.reads_counts_on_host = _loop_reads_counts
