"""Argument checks shared by the kernel wrappers: each error names the tensor and the fix."""
import torch


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
