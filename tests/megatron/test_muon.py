"""Muon (`megatron_qarl.trainer.muon`): the orthogonalization, the update, and Megatron's
Muon chain over a tiny Qwen3-MoE model."""

import pytest
import torch
from megatron.core.optimizer import OptimizerConfig
from megatron.core.optimizer import muon as megatron_muon

from megatron_qarl.layers import install_quant_refresh_hook
from megatron_qarl.trainer.muon import (
    MegatronMuon, get_muon_optimizer, orthogonalize, update_scale,
)
from megatron_qarl.trainer.optimizer import wrap_ddp

from tiny_qwen3 import build_tiny, optimizer_flags, train_losses


def _ill_conditioned(rows, cols, seed):
    g = torch.Generator().manual_seed(seed)
    u, _ = torch.linalg.qr(torch.randn(rows, rows, generator=g))
    v, _ = torch.linalg.qr(torch.randn(cols, cols, generator=g))
    k = min(rows, cols)
    s = torch.logspace(0, -2, k)  # condition number 100
    return u[:, :k] @ torch.diag(s) @ v[:, :k].T, u[:, :k] @ v[:, :k].T


@pytest.mark.parametrize("shape", [(48, 80), (80, 48), (64, 64)])
@pytest.mark.parametrize("bf16", [False, True])
def test_orthogonalize_keeps_the_singular_vectors_and_pushes_values_near_one(shape, bf16):
    matrix, polar = _ill_conditioned(*shape, seed=sum(shape))
    out = orthogonalize(matrix, steps=5, bf16=bf16)
    assert out.shape == matrix.shape and out.dtype == torch.float32
    values = torch.linalg.svdvals(out)
    # the tuned quintic leaves the singular values between about 0.7 and 1.2, not at 1
    assert values.max() < 1.2 and values.min() > 0.9, values
    cosine = (out * polar).sum() / (out.norm() * polar.norm())
    assert cosine > 0.995, cosine


def test_params_of_one_shape_are_orthogonalized_as_stacks(monkeypatch):
    """Five [24, 40] matrices in stacks of two (and one [40, 24]): each gets its own update."""
    from megatron_qarl.trainer import muon

    monkeypatch.setattr(muon, "STACK_ELEMENTS", 2 * 24 * 40)
    stacks = []
    real = muon.orthogonalize
    monkeypatch.setattr(muon, "orthogonalize",
                        lambda m, *a, **k: stacks.append(tuple(m.shape)) or real(m, *a, **k))
    g = torch.Generator().manual_seed(2)
    params = [torch.nn.Parameter(torch.zeros(*shape))
              for shape in [(24, 40)] * 3 + [(40, 24)] + [(24, 40)] * 2]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    MegatronMuon(params, lr=1.0, momentum_beta=0.0, use_nesterov=False, weight_decay=0.0,
                 fp32_matmul_prec="highest").step()
    for p in params:
        want = orthogonalize(p.grad, 5, bf16=False) * max(p.shape) ** 0.5
        torch.testing.assert_close(-p.detach(), want, rtol=1e-5, atol=1e-6)
    # no stack over the element budget
    assert sorted(stacks) == [(1, 24, 40), (1, 40, 24), (2, 24, 40), (2, 24, 40)]


def test_orthogonalize_of_zero_is_zero():
    out = orthogonalize(torch.zeros(8, 4), steps=5, bf16=False)
    assert torch.equal(out, torch.zeros(8, 4))


def test_update_scales():
    assert update_scale(2048, 768, "spectral") == pytest.approx(2048 ** 0.5)
    assert update_scale(768, 2048, "shape_scaling") == 1.0
    assert update_scale(2048, 512, "shape_scaling") == 2.0
    assert update_scale(512, 2048, "unit_rms_norm") == 0.5
    with pytest.raises(ValueError, match="'rms'"):
        update_scale(1, 1, "rms")


@pytest.mark.parametrize("nesterov", [False, True])
def test_step_is_momentum_then_decay_then_scaled_orthogonal_update(nesterov):
    g = torch.Generator().manual_seed(0)
    p = torch.nn.Parameter(torch.randn(24, 40, generator=g))
    grads = [torch.randn(24, 40, generator=g) for _ in range(3)]
    lr, beta, wd, extra = 0.02, 0.9, 0.1, 0.2
    opt = MegatronMuon([p], lr=lr, momentum_beta=beta, use_nesterov=nesterov,
                       weight_decay=wd, fp32_matmul_prec="highest", extra_scale_factor=extra)
    expected, buffer = p.detach().clone(), torch.zeros(24, 40)
    for grad in grads:
        p.grad = grad.clone()
        opt.step()
        buffer = beta * buffer + (1 - beta) * grad
        direction = (1 - beta) * grad + beta * buffer if nesterov else buffer
        expected = (expected * (1 - lr * wd)
                    - lr * extra * 40 ** 0.5 * orthogonalize(direction, 5, bf16=False))
        torch.testing.assert_close(p.detach(), expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(opt.state[p]["momentum_buffer"], buffer)


def test_l2_weight_decay_adds_to_the_gradient_before_momentum():
    """use_decoupled_weight_decay=False: weight decay is the L2 penalty's gradient, wd x p,
    added to the gradient (then momentum and orthogonalization), not a shrink of p."""
    g = torch.Generator().manual_seed(3)
    p = torch.nn.Parameter(torch.randn(24, 40, generator=g))
    grad = torch.randn(24, 40, generator=g)
    lr, beta, wd = 0.02, 0.9, 0.5
    opt = MegatronMuon([p], lr=lr, momentum_beta=beta, use_nesterov=False, weight_decay=wd,
                       use_decoupled_weight_decay=False, fp32_matmul_prec="highest")
    before = p.detach().clone()
    p.grad = grad.clone()
    opt.step()
    buffer = (1 - beta) * (grad + wd * before)
    expected = before - lr * 40 ** 0.5 * orthogonalize(buffer, 5, bf16=False)
    torch.testing.assert_close(p.detach(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("precision, bf16", [("medium", True), ("high", False),
                                             ("highest", False)])
def test_medium_matmul_precision_iterates_in_bf16(monkeypatch, precision, bf16):
    """--muon-fp32-matmul-prec medium (Megatron's default) runs the Newton-Schulz iteration
    in bf16; high and highest keep it in fp32."""
    from megatron_qarl.trainer import muon

    seen = []
    real = muon.orthogonalize
    monkeypatch.setattr(muon, "orthogonalize",
                        lambda m, steps, bf16: seen.append(bf16) or real(m, steps, bf16))
    p = torch.nn.Parameter(torch.zeros(8, 4))
    p.grad = torch.randn(8, 4)
    MegatronMuon([p], lr=1.0, momentum_beta=0.0, weight_decay=0.0,
                 fp32_matmul_prec=precision).step()
    assert seen == [bf16]


def test_qkv_rows_are_orthogonalized_per_projection():
    """Megatron's fused QKV weight, 2 head groups of (2 query heads, 1 key, 1 value) x 4
    channels: the update of each projection's rows is that projection's own."""
    groups, split, hidden = 2, (8, 4, 4), 12
    g = torch.Generator().manual_seed(1)
    p = torch.nn.Parameter(torch.zeros(groups * sum(split), hidden))
    p.grad = torch.randn(p.shape, generator=g)
    opt = MegatronMuon([p], lr=1.0, momentum_beta=0.0, use_nesterov=False, weight_decay=0.0,
                       split_qkv=True, is_qkv_fn=lambda _: True, qkv_split_shapes=split,
                       fp32_matmul_prec="highest")
    opt.step()
    grad = p.grad.view(groups, sum(split), hidden)
    update = -p.detach().view(groups, sum(split), hidden)
    start = 0
    for rows in split:
        piece = grad[:, start:start + rows].reshape(-1, hidden)
        want = orthogonalize(piece, 5, bf16=False) * max(piece.shape) ** 0.5
        torch.testing.assert_close(update[:, start:start + rows].reshape(-1, hidden), want)
        start += rows
    whole = orthogonalize(p.grad, 5, bf16=False) * max(p.shape) ** 0.5
    assert not torch.allclose(update.reshape(p.shape), whole, atol=1e-3)


def test_bad_settings_are_refused_at_construction():
    p = [torch.nn.Parameter(torch.zeros(2, 2))]
    with pytest.raises(ValueError, match="only 'blockwise'"):
        MegatronMuon(p, mode="distributed")
    with pytest.raises(ValueError, match="at least one Newton-Schulz step"):
        MegatronMuon(p, num_ns_steps=0)
    with pytest.raises(ValueError, match="scale mode 'x'"):
        MegatronMuon(p, scale_mode="x")


def test_megatron_chain_gives_muon_the_matrices_and_adam_the_rest(single_process):
    """Every 2-D weight but the embedding and the output layer goes to Muon, each expert its
    own matrix (with expert parallelism Megatron gives experts a second Muon); norms, the
    embedding and the output layer to Adam. Megatron's module is left as it was, and the
    model trains."""
    module = build_tiny("w4a16")
    model = wrap_ddp(module, module.config, use_distributed_optimizer=False)
    config = OptimizerConfig(optimizer="adam", lr=3e-3, weight_decay=0.01, clip_grad=1.0,
                             params_dtype=torch.float32, muon_extra_scale_factor=0.2)
    saved = megatron_muon.TensorParallelMuon, megatron_muon.HAVE_EMERGING_OPTIMIZERS
    optimizer = get_muon_optimizer(config, [model])
    assert (megatron_muon.TensorParallelMuon, megatron_muon.HAVE_EMERGING_OPTIMIZERS) == saved

    names = {id(p): n.removeprefix("module.") for n, p in model.named_parameters()}
    muon, *adams = [o.optimizer for o in optimizer.chained_optimizers]
    assert isinstance(muon, MegatronMuon) and adams
    assert not any(isinstance(o, MegatronMuon) for o in adams)
    to_muon = {names[id(p)] for group in muon.param_groups for p in group["params"]}
    to_adam = {names[id(p)] for o in adams for group in o.param_groups for p in group["params"]}
    assert to_muon | to_adam == set(names.values()) and not to_muon & to_adam
    assert to_muon == {n for n, p in module.named_parameters()
                       if p.ndim == 2 and not n.startswith(("embedding", "output_layer"))}
    assert {f"decoder.layers.0.mlp.experts.local_experts.{i}.linear_fc1.weight"
            for i in range(4)} <= to_muon
    assert all(p.requires_grad for p in model.parameters())

    losses = train_losses(model, optimizer, 5)
    assert losses[-1] < 0.8 * losses[0], losses
    assert len(muon.state) == len(to_muon)
    assert all(set(s) == {"momentum_buffer"} for s in muon.state.values())


def _muon_steps(rank: int, world_size: int, layer_wise: bool, steps: int):
    from megatron_qarl.compat.cpu_testing import init_parallel

    init_parallel(tp=1, ep=1, seed=1234)
    module = build_tiny("w4a16")
    model = wrap_ddp(module, module.config, use_distributed_optimizer=False)
    config = OptimizerConfig(optimizer="adam", lr=3e-3, weight_decay=0.01, clip_grad=1.0,
                             params_dtype=torch.float32, muon_extra_scale_factor=0.2,
                             muon_fp32_matmul_prec="highest")
    optimizer = get_muon_optimizer(config, [model], layer_wise=layer_wise)
    # as the trainer's build_optimizer: the all-gather writes through .data, which leaves the
    # masters' version counters as they were, so only the hook refreshes the W4A16 caches
    install_quant_refresh_hook(optimizer, model)
    muon = optimizer.chained_optimizers[0].optimizer
    owned = sum(len(group["params"]) for group in muon.param_groups)
    losses = train_losses(model, optimizer, steps)
    return owned, losses, [p.detach().clone() for p in module.parameters()]


def test_layer_wise_muon_splits_the_matrices_and_keeps_the_ranks_equal():
    """--use-distributed-optimizer with Muon, 2 data-parallel ranks (gloo, the all-gather of
    unequal shards padded: compat/cpu_testing.py): each rank's Muon updates part of the
    matrices, and both ranks hold the same weights bit for bit, those of plain Muon. Plain
    Muon sums the gradient norm for clipping in another order (4e-8 apart at step 2), so
    after 3 steps the weights agree to 1e-6, not to the bit, and the third loss to 1e-6."""
    from megatron_qarl.compat.cpu_testing import run_distributed

    (whole, plain_losses, plain), _ = run_distributed(_muon_steps, 2, False, 3)
    (owned_0, losses, weights_0), (owned_1, losses_1, weights_1) = run_distributed(
        _muon_steps, 2, True, 3)
    assert owned_0 + owned_1 == whole and 0 < owned_0 < whole
    assert losses == losses_1 and losses[-1] < 0.8 * losses[0], losses
    assert losses[:2] == plain_losses[:2]
    torch.testing.assert_close(losses, plain_losses, rtol=1e-6, atol=0)
    for a, b, p in zip(weights_0, weights_1, plain):
        assert torch.equal(a, b)
        torch.testing.assert_close(a, p, rtol=0, atol=1e-6 * p.abs().max().item())


def _constant(lr: float):
    from megatron_qarl.trainer.lr_schedule import LrSchedule

    return LrSchedule(lr, 0.0, 0.0, 0, 1, "constant")


@pytest.mark.parametrize("name", ["adam", "muon"])
def test_norms_and_biases_do_not_decay(single_process, name):
    """Megatron marks 1-D params wd_mult 0, which only its param scheduler applies: every
    group decayed, so a zero-gradient step shrank the RMSNorm weights by lr x weight decay."""
    from megatron.core.distributed import finalize_model_grads

    from megatron_qarl.trainer.optimizer import build_optimizer

    model = build_tiny("none", moe_aux_loss_coeff=0.0)
    ddp = wrap_ddp(model, model.config, False)
    args = optimizer_flags(optimizer=name)
    optimizer, _ = build_optimizer(args, ddp, _constant(0.1))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    ddp.zero_grad_buffer()
    optimizer.zero_grad()
    for p in model.parameters():  # every gradient exactly zero: only weight decay moves them
        p.main_grad.zero_()
    finalize_model_grads([ddp])
    optimizer.step()
    moved = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert moved and all(before[n].dim() > 1 for n in moved), sorted(moved)


@pytest.mark.parametrize("name", ["adam", "muon"])
def test_the_flags_reach_every_param_group_at_build_and_after_a_load(single_process, name):
    """build_optimizer's lr (the warm start's --sft-lr or RL's --lr), Adam's betas and eps,
    Muon's momentum and --clip-grad, in every group of the chain; a checkpoint load restores
    the groups as they were saved, and apply_group_settings sets them from the flags again (a
    resume with another --lr or --adam-beta2 trained at the checkpoint's)."""
    from megatron_qarl.layers.hooks import torch_optimizers
    from megatron_qarl.trainer.optimizer import apply_group_settings, build_optimizer

    model = build_tiny("none")
    ddp = wrap_ddp(model, model.config, False)
    args = optimizer_flags(optimizer=name, adam_beta1=0.8, adam_beta2=0.95, adam_eps=1e-6,
                            clip_grad=0.25, muon_momentum=0.9)
    optimizer, _ = build_optimizer(args, ddp, _constant(0.02))
    groups = [g for o in torch_optimizers(optimizer) for g in o.param_groups]
    kinds = {"betas" in g for g in groups}
    assert kinds == ({True} if name == "adam" else {True, False})

    def assert_flags():
        for g in groups:
            assert (g["lr"], g["max_lr"], g["min_lr"]) == (0.02, 0.02, 0.0)
            if "betas" in g:
                assert tuple(g["betas"]) == (0.8, 0.95) and g["eps"] == 1e-6
            else:
                assert g["momentum"] == 0.9

    assert_flags()
    assert {o.config.clip_grad for o in getattr(optimizer, "chained_optimizers",
                                                [optimizer])} == {0.25}
    for g in groups:  # what a checkpoint of another run's flags restores
        g.update(lr=1.0, max_lr=1.0, min_lr=1.0)
        if "betas" in g:
            g.update(betas=(0.5, 0.5), eps=1.0)
        else:
            g["momentum"] = 0.5
    apply_group_settings(optimizer, _constant(0.02), args)
    assert_flags()
