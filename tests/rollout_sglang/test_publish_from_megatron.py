"""The weight publisher on a real built model: the tiny Qwen3-MoE QaRL model (bf16, W4A16-g32)
built at TP=1 and, with the same weights, at TP=2, EP=2 and TP=2 x EP=2 (expert-TP 1) over
two gloo processes, wrapped as the trainer publishes it (DDP around Float16Module) and
published through model_params -> hf_stream on every rank. The sending rank must get exactly
the TP=1 tensors, byte for byte, under the names SGLang's loader maps, read from the layers'
caches rather than re-quantized. Targets: `experts` (what SGLang serves) and
`experts+attention` (quantized linear_qkv / linear_proj resharded too)."""
import os
import sys

import pytest
import torch
from megatron.core.transformer.module import Float16Module

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "megatron"))
from parallel_cases import LAYOUTS, load_full_state  # noqa: E402
from sglang_loader_names import CT_SUFFIXES, assert_loads_exactly  # noqa: E402
from tiny_qwen3 import build_tiny  # noqa: E402

from megatron_qarl.checkpoint.hf_config import dims_from_config  # noqa: E402
from megatron_qarl.checkpoint.model_preset import hf_config_from_preset  # noqa: E402
from megatron_qarl.compat.cpu_testing import init_parallel, run_distributed  # noqa: E402
from megatron_qarl.layers.export import iter_quantized_weights  # noqa: E402
from megatron_qarl.layers.hooks import quantized_modules  # noqa: E402
from megatron_qarl.models import QWEN3_MOE_TINY  # noqa: E402
from megatron_qarl.rollout.publish import (  # noqa: E402
    ParallelGroups, hf_stream, model_params, to_hf_tensors)
from megatron_qarl.rollout.sglang.engine import serving_params  # noqa: E402
from megatron_qarl.trainer.optimizer import wrap_ddp  # noqa: E402

SCHEME = "w4a16-g32"
TARGETS = ("experts", "experts+attention")
PUBLISHED = {"tp1": (1, 1, 1), **LAYOUTS}  # name: (tp, ep, etp)
DIMS = dims_from_config(hf_config_from_preset(QWEN3_MOE_TINY))
ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")


def _build(targets):
    return build_tiny(SCHEME, targets, params_dtype=torch.bfloat16)


def _publish(model, targets):
    """(sending rank?, {hf name: tensor}, caches left untouched?). The caches are filled as
    the learner's last forward leaves them; then the quantized masters move by a write the
    caches cannot see (`.data`), so only tensors read from the caches match the TP=1 model's."""
    caches = [c for _, m in quantized_modules(model) for c in m.quant_caches().values()]
    for cache in caches:
        cache.get()
    generations = [c.generation for c in caches]
    with torch.no_grad():
        for cache in caches:
            for master in cache.masters:
                master.data.neg_()
    params = model_params(model)
    if targets == "experts":
        params = serving_params(params, SCHEME)  # the SGLang engine's own filter
    groups = ParallelGroups.from_megatron()
    tensors = dict(hf_stream(params, groups, DIMS))
    return groups.is_sender(), tensors, generations == [c.generation for c in caches]


def _cached_serving(model):
    """The TP=1 caches' quantized weights as serving tensors (export.py's view of them)."""
    return {k: v for q in iter_quantized_weights(model)
            for k, v in to_hf_tensors(q.name, q.qweight, DIMS).items()}


def _publish_on_rank(rank, world_size):
    init_parallel(1, 1, 1, seed=7)
    full = {n: p.detach().clone() for n, p in _build("experts").named_parameters()}
    published, cached = {}, {}
    for layout, (tp, ep, etp) in PUBLISHED.items():
        init_parallel(tp, ep, etp, seed=11)
        for targets in TARGETS:
            model = _build(targets)
            load_full_state(model, full)
            model = wrap_ddp(Float16Module(model.config, model), model.config, False)
            published[layout, targets] = _publish(model, targets)
            if layout == "tp1":
                cached[targets] = _cached_serving(model)
    return published, cached


def _same_bytes(a, b):
    return (a.dtype, a.shape) == (b.dtype, b.shape) and torch.equal(
        a.contiguous().view(-1).view(torch.uint8), b.contiguous().view(-1).view(torch.uint8))


@pytest.fixture(scope="module")
def by_rank():
    """Per rank: ({(layout, targets): (sender?, tensors, caches untouched?)}, TP=1 caches)."""
    return run_distributed(_publish_on_rank, 2)


def test_only_rank_zero_sends(by_rank):
    (published0, _), (published1, _) = by_rank
    for key, (sender0, _, _) in published0.items():
        sender1, got1, _ = published1[key]
        assert (sender0, sender1) == (True, False), key
        assert got1 == {}, f"{key}: a non-sending rank produced tensors"


def test_names_are_what_sglang_loads(by_rank):
    published = by_rank[0][0]
    experts_only = published["tp1", "experts"][1].keys()
    assert_loads_exactly(experts_only, DIMS.num_layers, DIMS.num_experts)
    quantized_attention = {n[:-len("weight")] + s if n.split(".")[-2] in ATTENTION else n
                           for n in experts_only for s in CT_SUFFIXES}
    assert published["tp1", "experts+attention"][1].keys() == quantized_attention
    for layout in LAYOUTS:
        for targets in TARGETS:
            assert published[layout, targets][1].keys() == \
                published["tp1", targets][1].keys(), (layout, targets)


def test_sharded_tensors_equal_tp1_bytes(by_rank):
    published = by_rank[0][0]
    for targets in TARGETS:
        tp1 = published["tp1", targets][1]
        for name, t in tp1.items():
            if not name.endswith(CT_SUFFIXES):
                assert t.dtype == torch.bfloat16, name
        for layout in LAYOUTS:
            got = published[layout, targets][1]
            for name, t in tp1.items():
                assert _same_bytes(got[name], t), (layout, targets, name)


def test_quantized_tensors_come_from_the_caches(by_rank):
    for rank, (published, _) in enumerate(by_rank):
        for key, (_, _, untouched) in published.items():
            assert untouched, f"rank {rank} {key}: publishing re-quantized a cache"
    published, cached = by_rank[0]
    for targets in TARGETS:
        tp1 = published["tp1", targets][1]
        assert cached[targets].keys() == {n for n in tp1 if n.endswith(CT_SUFFIXES)}
        for name, t in cached[targets].items():
            assert _same_bytes(tp1[name], t), (targets, name)
