"""Input checks shared by every scheme: each error names the tensor and the fix."""
import torch


class QuantizationError(ValueError):
    """A weight or activation cannot be quantized as asked."""


MASTER_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def check_master_weight(name: str, weight: torch.Tensor, check_finite: bool = True) -> None:
    if weight.dtype not in MASTER_DTYPES:
        raise QuantizationError(
            f"{name}: dtype {weight.dtype} cannot be quantized; pass the full-precision master "
            f"weight (one of {', '.join(str(d) for d in MASTER_DTYPES)}), not an already "
            f"quantized or integer tensor"
        )
    if weight.dim() < 2:
        raise QuantizationError(
            f"{name}: shape {tuple(weight.shape)} is not a [..., out, in] weight matrix"
        )
    if check_finite and not bool(torch.isfinite(weight).all()):
        bad = int((~torch.isfinite(weight)).sum())
        raise QuantizationError(
            f"{name}: {bad} NaN/inf values in the weight; the master weights diverged or the "
            f"checkpoint is corrupt: resume from an earlier checkpoint or lower --lr"
        )


def check_divisible(name: str, dim_name: str, size: int, multiple: int, fix: str) -> None:
    if size % multiple:
        raise QuantizationError(
            f"{name}: {dim_name} {size} is not a multiple of {multiple}; {fix}"
        )
