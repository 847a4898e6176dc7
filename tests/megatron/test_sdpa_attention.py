"""--attention-backend sdpa: torch's scaled_dot_product_attention behind Megatron's core
attention interface gives DotProductAttention's outputs and gradients, for the learner's
causal forward and for the rollout engine's windows over its KV cache."""
import pytest
import torch
from megatron.core.transformer.dot_product_attention import DotProductAttention
from megatron.core.transformer.enums import AttnMaskType

from megatron_qarl.layers.sdpa_attention import SDPAttention
from megatron_qarl.models import QWEN3_MOE_TINY, build_model
from megatron_qarl.rollout.embedded.generate import causal_mask

from tiny_qwen3 import batch, build_tiny, tiny_config

HEADS, GROUPS, DIM = 4, 2, 8  # grouped-query attention, as Qwen3's


def _pair():
    config = tiny_config(num_attention_heads=HEADS, num_query_groups=GROUPS, kv_channels=DIM)
    args = (config, 1, AttnMaskType.causal, "self")
    return DotProductAttention(*args), SDPAttention(*args)


@pytest.mark.parametrize("sq, sk, mask_type", [
    (9, 9, AttnMaskType.causal),     # the learner's forward, and the engine's prefill
    (1, 9, AttnMaskType.no_mask),    # one decode step past the prompt
    (2, 9, AttnMaskType.no_mask),    # a decode window padded for sequence parallelism
])
def test_sdpa_equals_megatron_dot_product_attention(single_process, sq, sk, mask_type):
    local, sdpa = _pair()
    g = torch.Generator().manual_seed(sq)
    q = torch.randn(sq, 3, HEADS, DIM, generator=g, requires_grad=True)
    k = torch.randn(sk, 3, GROUPS, DIM, generator=g, requires_grad=True)
    v = torch.randn(sk, 3, GROUPS, DIM, generator=g, requires_grad=True)
    mask = causal_mask(sk, q.device)[..., sk - sq:, :]  # the engine's slice of its mask
    want = local(q, k, v, mask, attn_mask_type=mask_type)
    got = sdpa(q, k, v, mask, attn_mask_type=mask_type)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    if sq == 2:  # the first query must not see the padded key after it
        assert not torch.allclose(got[0], sdpa(q, k, v, None, mask_type)[0], atol=1e-3)
    grads = [torch.autograd.grad(out.square().sum(), (q, k, v)) for out in (want, got)]
    for a, b in zip(*grads):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)


def test_a_model_with_sdpa_gives_the_local_models_logits(single_process):
    local = build_tiny("w4a16")
    sdpa = build_model(tiny_config(), "w4a16", targets="experts+attention",
                       attention_backend="sdpa", **QWEN3_MOE_TINY.model_kwargs())
    sdpa.load_state_dict(local.state_dict())
    tokens, positions = batch()
    mask = causal_mask(tokens.shape[1], tokens.device)
    with torch.no_grad():
        torch.testing.assert_close(sdpa(tokens, positions, mask), local(tokens, positions, mask),
                                   rtol=1e-4, atol=1e-4)
    assert sum(isinstance(m, SDPAttention) for m in sdpa.modules()) == 2  # both layers


def test_sdpa_refuses_what_it_cannot_run(single_process):
    config = tiny_config(attention_dropout=0.1)
    with pytest.raises(ValueError, match="--attention-backend sdpa does not support attention "
                                         "dropout 0.1; use --attention-backend local"):
        SDPAttention(config, 1, AttnMaskType.causal, "self")
