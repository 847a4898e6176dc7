"""The routers' load-balancing loss leaves the right padding out: the router weights'
gradient of a training forward does not depend on what the padding holds. Without the
padding mask (or with megatron-core reading it the other way round) it does."""
import pytest
import torch

from megatron_qarl.compat.cpu_testing import init_parallel
from megatron_qarl.models import QWEN3_MOE_TINY, build_model
from megatron_qarl.rollout.base import Sample
from megatron_qarl.trainer.batches import collate
from megatron_qarl.trainer.logprobs import response_logprobs


def _router_grads(model, pad_id: int):
    samples = [Sample([3, 4, 5], [6, 7], [-1.0] * 2, "stop"),
               Sample([8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18], [-1.0] * 9, "stop"),
               Sample([20], [21], [-1.0], "stop")]
    batch = collate(samples, torch.zeros(3), pad_id=pad_id, device="cpu")
    model.zero_grad()
    torch.where(batch.mask, response_logprobs(model, batch, 1.0), 0.0).sum().backward()
    return [p.grad.clone() for name, p in model.named_parameters() if "router" in name]


@pytest.mark.parametrize("masked", [True, False], ids=["padding-mask", "no-mask"])
def test_padding_does_not_reach_the_routers_gradient(monkeypatch, masked):
    init_parallel(tp=1, ep=1, seed=3)
    config = QWEN3_MOE_TINY.transformer_config(params_dtype=torch.float32,
                                               use_cpu_initialization=True,
                                               moe_aux_loss_coeff=0.1)
    model = build_model(config, "none", **QWEN3_MOE_TINY.model_kwargs())
    if not masked:  # the check itself: the same forward without the mask sees the padding
        real_forward = model.forward
        monkeypatch.setattr(model, "forward", lambda *a, padding_mask=None, **k:
                            real_forward(*a, **k))
    grads = [_router_grads(model, pad_id) for pad_id in (0, 50, 99)]
    same = all(torch.allclose(g, h, rtol=0, atol=1e-7) for other in grads[1:]
               for g, h in zip(grads[0], other))
    assert same == masked
    assert all(g.abs().sum() > 0 for g in grads[0])
