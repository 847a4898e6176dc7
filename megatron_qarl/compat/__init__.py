"""megatron-core 0.16.1 fixes (`megatron_fixes`, `torch_norm`, `expert_grads`,
`layer_wise_optimizer`) and the CPU test support (`cpu_testing`, imported explicitly by tests
and `--device cpu` runs only: it patches torch.cuda)."""
from .expert_grads import reduce_expert_grads_over_expert_dp
from .megatron_fixes import apply_megatron_fixes
from .torch_norm import TorchNorm

__all__ = [
    "apply_megatron_fixes", "TorchNorm", "reduce_expert_grads_over_expert_dp",
]
