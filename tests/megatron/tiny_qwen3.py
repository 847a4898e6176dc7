"""Tiny Qwen3-MoE models on CPU (fp32) for the Megatron-integration tests."""
from types import SimpleNamespace

import pytest
import torch

from megatron_qarl.models import QWEN3_MOE_TINY, build_model

SEQ, BATCH = 16, 2

#: For tests that register the CUDA kernels for these CPU models: Triton reads CPU tensors only
#: under its interpreter, which tests/conftest.py turns on only where there is no GPU. On a GPU
#: machine the same kernels are checked on the GPU (tests/kernels, `python -m qarl_kernels.bench`).
triton_kernels_on_cpu = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="hands CPU tensors to Triton kernels: needs the interpreter, off where there is a GPU")


def tiny_config(**overrides):
    """fp32 unless `params_dtype` is overridden (the publisher tests want a bf16 learner)."""
    kwargs = {"params_dtype": torch.float32, "use_cpu_initialization": True, **overrides}
    return QWEN3_MOE_TINY.transformer_config(**kwargs)


def build_tiny(scheme="none", targets="experts+attention", grouped_experts=False, **overrides):
    return build_model(tiny_config(**overrides), scheme, targets=targets,
                       grouped_experts=grouped_experts, **QWEN3_MOE_TINY.model_kwargs())


def batch(seed=0, batch_size=BATCH):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, QWEN3_MOE_TINY.vocab_size, (batch_size, SEQ), generator=g)
    return tokens, torch.arange(SEQ).expand(batch_size, SEQ)


def token_losses(model, tokens, positions):
    """Each position's next-token loss [batch, seq]."""
    return model(tokens, positions, None, labels=tokens.roll(-1, dims=1))


def loss_of(model, tokens, positions):
    """Summed next-token loss (a sum, so data-parallel shards add up to the full batch)."""
    return token_losses(model, tokens, positions).sum()


def train_losses(model, optimizer, steps: int):
    """The loss before each of `steps` optimizer steps on one fixed batch."""
    tokens, positions = batch()
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_of(model, tokens, positions)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def optimizer_flags(**changed) -> SimpleNamespace:
    """The flags trainer.optimizer.build_optimizer reads, for one CPU process with fp32
    parameters; `changed` overrides (or adds) any of them."""
    flags = dict(weight_decay=0.01, adam_beta1=0.9, adam_beta2=0.98, adam_eps=1e-8,
                 clip_grad=1.0, bf16=False, use_distributed_optimizer=False, optimizer="adam",
                 muon_momentum=0.95, muon_use_nesterov=False, muon_scale_mode="spectral",
                 muon_num_ns_steps=5, muon_extra_scale_factor=1.0,
                 muon_fp32_matmul_prec="highest")
    return SimpleNamespace(**{**flags, **changed})
