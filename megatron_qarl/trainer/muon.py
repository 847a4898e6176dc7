"""Muon, the optimizer the paper trains with (lr 1e-6, weight decay 0.01), for
megatron-core 0.16.1.

Megatron's `get_megatron_muon_optimizer` splits a model the way Muon wants: 2-D weights to
Muon (each expert its own matrix, the fused QKV weight per head group), everything else
(embeddings, output layer, norms, biases) to Adam, expert weights in their own optimizer for
the gradient-norm groups, all chained. Its orthogonalized optimizer, `TensorParallelMuon`,
is written against an emerging_optimizers API that no release carries: 0.3.0, the only one
on PyPI, takes `nesterov` and `tp_mode` where Megatron passes `use_nesterov` and `mode`, and
needs Python 3.12. `MegatronMuon` takes the constructor Megatron calls and makes the update
its OptimizerConfig describes; `get_muon_optimizer` runs Megatron's function with it.

Across tensor parallelism the update is Megatron's default, blockwise: each rank
orthogonalizes its own shard, with the scale of the shard's shape."""
from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Callable, List, Optional, Sequence, Tuple

import torch

# Newton-Schulz quintic coefficients tuned per iteration (K. Jordan's modded-nanogpt, as
# derived in F. Cesista's "Muon optimizer coefficients"); step i uses set i mod 5.
QUINTIC_COEFFICIENTS = (
    (4.0848, -6.8946, 2.9270),
    (3.9505, -6.3029, 2.6377),
    (3.7418, -5.5913, 2.3037),
    (2.8769, -3.1427, 1.2046),
    (2.8366, -3.0525, 1.2012),
)
SCALE_MODES = ("spectral", "shape_scaling", "unit_rms_norm")
MATMUL_PRECISIONS = ("medium", "high", "highest")
STACK_ELEMENTS = 1 << 26  # fp32 elements orthogonalized at once: 256 MiB, x3 with the iteration


def orthogonalize(matrices: torch.Tensor, steps: int, bf16: bool) -> torch.Tensor:
    """About U V^T for each matrix = U S V^T (singular values pushed near 1, not exactly 1),
    in fp32; `matrices` is one [m, n] matrix or a [batch, m, n] stack. The iteration runs in
    bf16 when `bf16`."""
    x = matrices.float()
    tall = x.size(-2) > x.size(-1)
    if tall:  # iterate on the smaller Gram matrix
        x = x.mT
    # spectral norm <= Frobenius norm <= 1
    x = x / torch.linalg.matrix_norm(x, keepdim=True).clamp_min(1e-7)
    if bf16:
        x = x.bfloat16()
    fma = torch.baddbmm if x.ndim == 3 else torch.addmm  # scale and add in the GEMM's epilogue
    for i in range(steps):
        a, b, c = QUINTIC_COEFFICIENTS[i % len(QUINTIC_COEFFICIENTS)]
        gram = x @ x.mT
        x = fma(x, fma(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    x = x.float()
    return x.mT if tall else x


def update_scale(rows: int, cols: int, mode: str) -> float:
    """The factor on an orthogonalized [rows, cols] update (emerging_optimizers' modes)."""
    if mode == "spectral":
        return max(rows, cols) ** 0.5
    if mode == "shape_scaling":
        return max(1.0, rows / cols) ** 0.5
    if mode == "unit_rms_norm":
        return (rows / cols) ** 0.5
    raise ValueError(f"Muon scale mode {mode!r} is not one of {SCALE_MODES}")


@contextlib.contextmanager
def _fp32_matmul_precision(precision: str):
    saved = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(saved)


class MegatronMuon(torch.optim.Optimizer):
    """Decoupled (or L2) weight decay, momentum, then the momentum's orthogonalization, scaled,
    as the step: emerging_optimizers' order. The signature is the one
    `get_megatron_muon_optimizer` calls (`pg_collection` serves only modes other than
    blockwise)."""

    def __init__(self, params, lr: float = 3e-4, momentum_beta: float = 0.95,
                 use_nesterov: bool = True, weight_decay: float = 0.01,
                 use_decoupled_weight_decay: bool = True, split_qkv: bool = False,
                 is_qkv_fn: Optional[Callable[[torch.Tensor], bool]] = None,
                 qkv_split_shapes: Optional[Sequence[int]] = None,
                 fp32_matmul_prec: str = "medium", num_ns_steps: int = 5,
                 scale_mode: str = "spectral", extra_scale_factor: float = 1.0,
                 pg_collection=None, mode: str = "blockwise") -> None:
        if mode != "blockwise":
            raise ValueError(f"Muon tensor-parallel mode {mode!r}: only 'blockwise' "
                             f"(OptimizerConfig.muon_tp_mode, Megatron's default) is built")
        if num_ns_steps < 1:
            raise ValueError(f"Muon needs at least one Newton-Schulz step, got {num_ns_steps}")
        if fp32_matmul_prec not in MATMUL_PRECISIONS:
            raise ValueError(f"Muon fp32 matmul precision {fp32_matmul_prec!r} is not one of "
                             f"{MATMUL_PRECISIONS}")
        update_scale(1, 1, scale_mode)  # rejects an unknown mode now, not at the first step
        self.nesterov = use_nesterov
        self.decoupled_weight_decay = use_decoupled_weight_decay
        self.split_qkv = split_qkv
        self.is_qkv_fn = is_qkv_fn
        self.qkv_split_shapes = tuple(qkv_split_shapes) if qkv_split_shapes else None
        self.fp32_matmul_prec = fp32_matmul_prec
        self.num_ns_steps = num_ns_steps
        self.scale_mode = scale_mode
        self.extra_scale_factor = extra_scale_factor
        super().__init__(params, dict(lr=lr, momentum=momentum_beta, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        if closure is not None:
            raise ValueError("MegatronMuon.step takes no closure")
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            lr, momentum, weight_decay = group["lr"], group["momentum"], group["weight_decay"]
            grads = [p.grad for p in params]
            if weight_decay and self.decoupled_weight_decay:
                torch._foreach_add_(params, params, alpha=-lr * weight_decay)
            elif weight_decay:
                grads = torch._foreach_add(grads, params, alpha=weight_decay)
            buffers = [self._momentum_buffer(p) for p in params]
            torch._foreach_lerp_(buffers, grads, 1 - momentum)
            directions = (torch._foreach_lerp(grads, buffers, momentum) if self.nesterov
                          else buffers)
            torch._foreach_add_(params, self._orthogonal_updates(params, directions),
                                alpha=-lr)
        return None

    def _momentum_buffer(self, p: torch.Tensor) -> torch.Tensor:
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = torch.zeros_like(p)
        return state["momentum_buffer"]

    def _orthogonal_updates(self, params, directions) -> List[torch.Tensor]:
        """Matrices of one shape (a layer's experts, the same weight in every layer) are
        orthogonalized as stacks of up to STACK_ELEMENTS elements, one bmm chain each."""
        updates: List[Optional[torch.Tensor]] = [None] * len(params)
        same_shape = defaultdict(list)
        for i, (p, direction) in enumerate(zip(params, directions)):
            if direction.ndim != 2:
                raise ValueError(f"Muon updates 2-D weights; got a {tuple(direction.shape)} "
                                 f"one (Megatron gives other shapes to Adam)")
            if self.split_qkv and self.is_qkv_fn(p):
                updates[i] = self._qkv_update(direction)
            else:
                same_shape[direction.shape].append(i)
        for shape, indices in same_shape.items():
            per_stack = max(1, STACK_ELEMENTS // shape.numel())
            for first in range(0, len(indices), per_stack):
                chunk = indices[first:first + per_stack]
                stacked = self._scaled(torch.stack([directions[i] for i in chunk]))
                for i, update in zip(chunk, stacked.to(directions[chunk[0]].dtype).unbind()):
                    updates[i] = update
        return updates

    def _qkv_update(self, direction: torch.Tensor) -> torch.Tensor:
        """[groups * (q + k + v), hidden]: the Q, K and V rows of all head groups each
        orthogonalized on their own."""
        rows, hidden = direction.shape
        per_group = sum(self.qkv_split_shapes)
        pieces = direction.view(rows // per_group, per_group, hidden).split(
            self.qkv_split_shapes, dim=1)
        return torch.cat([self._scaled(piece.reshape(-1, hidden)).view(piece.shape)
                          for piece in pieces], dim=1).view(rows, hidden).to(direction.dtype)

    def _scaled(self, matrices: torch.Tensor) -> torch.Tensor:
        with _fp32_matmul_precision(self.fp32_matmul_prec):
            update = orthogonalize(matrices, self.num_ns_steps,
                                   bf16=self.fp32_matmul_prec == "medium")
        rows, cols = matrices.shape[-2:]
        return update.mul_(update_scale(rows, cols, self.scale_mode) * self.extra_scale_factor)


def get_muon_optimizer(config, model_chunks: Sequence[torch.nn.Module],
                       layer_wise: bool = False):
    """Megatron's Muon chain (see the module docstring) with `MegatronMuon` inside. layer_wise:
    in Megatron's LayerWiseDistributedOptimizer (with compat's fix for fp32 saves), which
    splits whole weights and their state over the data-parallel ranks and all-gathers the
    updated weights after each step."""
    from megatron.core.optimizer import muon as megatron_muon

    from ..compat.layer_wise_optimizer import LayerWiseOptimizer

    saved: Tuple = (megatron_muon.TensorParallelMuon, megatron_muon.HAVE_EMERGING_OPTIMIZERS,
                    megatron_muon.LayerWiseDistributedOptimizer)
    megatron_muon.TensorParallelMuon = MegatronMuon
    megatron_muon.HAVE_EMERGING_OPTIMIZERS = True
    megatron_muon.LayerWiseDistributedOptimizer = LayerWiseOptimizer
    try:
        return megatron_muon.get_megatron_muon_optimizer(
            config, list(model_chunks), layer_wise_distributed_optimizer=layer_wise)
    finally:
        (megatron_muon.TensorParallelMuon, megatron_muon.HAVE_EMERGING_OPTIMIZERS,
         megatron_muon.LayerWiseDistributedOptimizer) = saved
