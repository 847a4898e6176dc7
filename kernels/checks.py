"""Argument checks shared by the kernel wrappers: each error names the tensor and the fix."""
import torch

from megatron_qarl.quant.errors import check_master_weight


def nonfinite_counter(weight: torch.Tensor, given: torch.Tensor = None) -> torch.Tensor:
    """The int32 [1] the weight quantizers add a master's NaN/inf count to in their pass
    (numerics.is_nonfinite): `given` (the caller's, see quant.ops.quantize_weight) or a new
    one."""
    if given is None:
        return torch.zeros(1, device=weight.device, dtype=torch.int32)
    if given.dtype != torch.int32 or given.numel() != 1 or given.device != weight.device:
        raise ValueError(
            f"nonfinite: {given.dtype} {tuple(given.shape)} on {given.device}; pass an int32 "
            f"tensor of one element on the weight's device ({weight.device})"
        )
    return given


def raise_if_nonfinite(name: str, weight, counter: torch.Tensor) -> None:
    """One host sync; raises QuantizationError naming `name` and the count if any (weight: the
    master, or one master an expert)."""
    if int(counter.item()):
        if not isinstance(weight, torch.Tensor):
            weight = torch.stack(list(weight))
        check_master_weight(name, weight, check_finite=True)  # raises, naming the count


def unit_stride_rows(t: torch.Tensor) -> torch.Tensor:
    """t itself where its last dim is contiguous (the kernels take a row stride), else a copy."""
    return t if t.stride(-1) == 1 else t.contiguous()


def unit_stride_codes(xq: torch.Tensor, dtype: torch.dtype, in_features: int) -> torch.Tensor:
    """A quantized activation [M, in] of `dtype` (its quantizer's), rows of unit stride: the
    GEMMs read K codes a row from its start (a transposed or unquantized one read others)."""
    if xq.dim() != 2 or xq.dtype != dtype or xq.shape[1] != in_features:
        raise ValueError(f"xq: {xq.dtype} {tuple(xq.shape)}; pass the [tokens, {in_features}] "
                         f"{dtype} codes of the scheme's activation quantizer")
    return unit_stride_rows(xq)


def check_activation(x: torch.Tensor, in_features: int, name: str = "x") -> None:
    if x.shape[-1] != in_features:
        raise ValueError(
            f"{name}: last dim {x.shape[-1]} does not match the weight's in_features "
            f"{in_features}; pass activations laid out [..., in_features]"
        )


def check_tokens_per_expert(tokens_per_expert: torch.Tensor, num_experts: int,
                            rows: int) -> None:
    """Shape/dtype only: the sum is not checked here, that would need a host sync."""
    if tokens_per_expert.dim() != 1 or tokens_per_expert.numel() != num_experts:
        raise ValueError(
            f"tokens_per_expert: shape {tuple(tokens_per_expert.shape)}, expected "
            f"({num_experts},), one count per local expert of the weight"
        )
    if tokens_per_expert.dtype.is_floating_point:
        raise ValueError(
            f"tokens_per_expert: dtype {tokens_per_expert.dtype}; pass integer counts"
        )


def counts_on(device: torch.device, tokens_per_expert: torch.Tensor) -> torch.Tensor:
    """int32 counts on the kernel's device (a no-op when they already are)."""
    return tokens_per_expert.to(device=device, dtype=torch.int32, non_blocking=True)


def scale_words_fit(scale: torch.Tensor) -> bool:
    """The bf16 scales can be read as int32 words holding group pairs: an even number of
    groups per row, contiguous rows, and 4-byte aligned."""
    return (scale.shape[-1] % 2 == 0 and scale.stride(-1) == 1
            and all(st % 2 == 0 for st in scale.stride()[:-1]) and scale.data_ptr() % 4 == 0)


def tile_rows(x_rows: int, routed_rows) -> int:
    """The rows a grouped kernel chooses its tiles for: x's, or routed_rows where x is padded
    past the rows routing is expected to fill (a fixed-size token exchange's capacity). Grids
    still cover every row of x, so a routing that fills more rows than expected stays exact."""
    if routed_rows is None or x_rows == 0:
        return x_rows
    if isinstance(routed_rows, bool) or not isinstance(routed_rows, int) \
            or not 0 < routed_rows <= x_rows:
        raise ValueError(
            f"routed_rows={routed_rows!r}: the rows routing is expected to fill, an int in "
            f"[1, {x_rows}] (x's rows), or None to choose tiles for all of x"
        )
    return routed_rows


def check_expert_tokens(x: torch.Tensor) -> None:
    """The fused experts' tokens: bf16, or uint8 rows the dispatcher moved quantized (fp32
    tokens gave INT8 a bf16 result off the composed reference by 1%, FP8 an error about h)."""
    if x.dtype not in (torch.bfloat16, torch.uint8):
        raise ValueError(f"x: dtype {x.dtype}; the fused experts take bf16 tokens (or the "
                         f"dispatcher's quantized uint8 rows): cast with x.to(torch.bfloat16)")


def check_swiglu_input(h: torch.Tensor) -> None:
    """fc1's output h = [gate | up] [tokens, 2 * ffn] in bf16."""
    if h.dim() != 2 or h.shape[1] % 2:
        raise ValueError(f"h: shape {tuple(h.shape)}; the experts' fc1 output [tokens, 2 * ffn] "
                         f"= [gate | up] is expected")
    if h.dtype != torch.bfloat16:
        raise ValueError(f"h: dtype {h.dtype}; fc1's output is bf16 (cast with "
                         f"h.to(torch.bfloat16))")


def check_probs(probs, rows: int) -> None:
    """None, or one router prob per row of the GEMM's input."""
    if probs is not None and tuple(probs.shape) != (rows,):
        raise ValueError(f"probs: shape {tuple(probs.shape)}; one router prob per row of x "
                         f"({rows},)")
