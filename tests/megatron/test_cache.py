"""The quantized-weight cache: once per optimizer step, reused by every micro-batch and by the
publisher iterator, invalidated by the optimizer post-step hook, never stale."""
import gc
import weakref

import pytest
import torch

from megatron_qarl.layers import (
    install_quant_refresh_hook, iter_quantized_weights, quantized_modules,
)

from tiny_qwen3 import batch, build_tiny, loss_of


def caches(model):
    return [c for _n, m in quantized_modules(model) for c in m.quant_caches().values()]


def test_micro_batches_and_publisher_share_one_quantization_per_step(single_process):
    model = build_tiny("w4a16-g32")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    install_quant_refresh_hook(opt, model)
    for step in range(2):
        for micro in range(3):
            loss_of(model, *batch(seed=micro)).backward()
        published = list(iter_quantized_weights(model))
        assert all(c.quantize_count == step + 1 for c in caches(model))
        before = {t.name: t.qweight.data.clone() for t in published}
        opt.step()
        opt.zero_grad()
    after = {t.name: t.qweight for t in iter_quantized_weights(model)}
    # after the step the publisher sees the new masters, quantized once more
    assert all(c.quantize_count == 3 for c in caches(model))
    assert any(not torch.equal(before[n], after[n].data) for n in before)
    for _name, module in quantized_modules(model):
        for cache in module.quant_caches().values():
            fresh = cache.scheme.quantize_weight(cache.master().detach())
            assert torch.equal(cache.get().data, fresh.data)
            assert torch.equal(cache.get().scale, fresh.scale)


def test_in_place_master_update_without_hook_is_caught_by_version(single_process):
    model = build_tiny("fp8-block", targets="experts")
    cache = caches(model)[0]
    old = cache.get()
    with torch.no_grad():
        cache.masters[1].mul_(2.0)  # bumps the parameter's _version
    assert not cache.is_fresh()
    assert torch.equal(cache.get().scale[1], old.scale[1] * 2)  # expert 1 of the stack
    assert torch.equal(cache.get().scale[0], old.scale[0])
    assert torch.equal(cache.get().scale[2:], old.scale[2:])


def test_a_master_moved_to_another_dtype_is_quantized_again():
    """Module.to(dtype) swaps each param's .data without bumping its version: the cache kept
    the codes of the fp32 master (7 of 1024 codes differed from the bf16 one's)."""
    from megatron_qarl.layers.weight_cache import QuantizedWeightCache
    from megatron_qarl.quant import W4A16

    torch.manual_seed(0)
    scheme, linear = W4A16(32), torch.nn.Linear(64, 16, bias=False)
    cache = QuantizedWeightCache(scheme, [linear.weight], "w", stacked=False)
    cache.get()
    linear.to(torch.bfloat16)
    assert not cache.is_fresh()
    assert torch.equal(cache.get().data, scheme.quantize_weight(linear.weight.detach()).data)


def test_hook_covers_writes_the_version_counter_misses(single_process):
    """Megatron's optimizers write through `.data`/param buffers: only the hook sees that."""
    model = build_tiny("int8", targets="experts")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    cache = caches(model)[0]
    old = cache.get()
    cache.masters[0].data.mul_(2.0)
    assert cache.is_fresh() and cache.get() is old  # stale without the hook ...
    install_quant_refresh_hook(opt, model)
    opt.step()  # no grads: params unchanged, but the step fires the hook
    assert torch.equal(cache.get().scale[0], old.scale[0] * 2)  # ... re-quantized with it


def test_iterator_names_and_partition_metadata(single_process):
    model = build_tiny("w4a16-g32")
    tensors = {t.name: t for t in iter_quantized_weights(model)}
    params = dict(model.named_parameters())
    assert len(tensors) == 2 * (2 + 2 * 4)
    assert set(tensors) <= set(params)
    fc1 = tensors["decoder.layers.1.mlp.experts.local_experts.3.linear_fc1.weight"]
    assert (fc1.expert, fc1.partition_dim, fc1.partition_stride) == (3, None, 1)  # unsplit
    assert fc1.qweight.shape == tuple(params[fc1.name].shape)
    proj = tensors["decoder.layers.0.self_attention.linear_proj.weight"]
    assert (proj.expert, proj.partition_dim, proj.tp_size) == (None, None, 1)


def test_a_model_invalidated_together_is_quantized_together(single_process):
    """The post-step hook's invalidation: the first read re-quantizes every weight of the
    model (one host sync for their NaN/inf checks); a cache invalidated alone refreshes alone."""
    model = build_tiny("w4a16-g32")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    install_quant_refresh_hook(opt, model)
    loss_of(model, *batch(seed=0)).backward()
    opt.step()
    first = caches(model)[-1]
    assert not any(c.is_fresh() for c in caches(model))
    first.get()
    assert all(c.is_fresh() and c.quantize_count == 2 for c in caches(model))
    first.invalidate()
    first.get()
    assert first.quantize_count == 3
    assert all(c.quantize_count == 2 for c in caches(model) if c is not first)


def test_the_quantizer_reads_the_experts_masters_in_place(single_process, monkeypatch):
    """No stacked copy of a layer's experts a step: the quantize op gets each expert's master
    (the kernels read them where they lie), a dense layer its one master."""
    from megatron_qarl.quant import ops
    model = build_tiny("fp8-block")
    inputs, real = [], ops.quantize_weight

    def recording(scheme, weight, name="weight", nonfinite=None):
        inputs.append(weight)
        return real(scheme, weight, name, nonfinite)

    monkeypatch.setattr(ops, "quantize_weight", recording)
    assert any(cache.stacked for cache in caches(model))
    for cache in caches(model):
        cache.invalidate()
        cache.get()
        given = inputs[-1]
        if cache.stacked:
            assert [m.data_ptr() for m in given] == [p.data_ptr() for p in cache.masters]
        else:
            assert given.data_ptr() == cache.masters[0].data_ptr()
        assert torch.equal(cache.get().data.view(torch.uint8),
                           cache.scheme.quantize_weight(cache.master()).data.view(torch.uint8))
    assert len(inputs) == len(caches(model))


def test_nan_in_one_weight_names_it_and_keeps_no_new_weight(single_process):
    from megatron_qarl.layers import invalidate_quantized_weights
    from megatron_qarl.quant import QuantizationError
    model = build_tiny("int8", targets="experts")
    bad = caches(model)[1]
    invalidate_quantized_weights(model)
    bad.masters[2].data[0, 1] = float("nan")
    for _ in range(2):  # a retry raises again: nothing quantized from the NaN is served
        with pytest.raises(QuantizationError, match=rf"{bad.name}: 1 NaN/inf values"):
            caches(model)[0].get()
        assert not any(c.is_fresh() for c in caches(model))


def test_a_dropped_model_invalidated_together_is_freed_without_the_cyclic_gc(single_process):
    """The refresh group holds its caches weakly: a cycle through it kept a dropped model's
    weights alive until the cyclic garbage collector ran (session 49's layers bench)."""
    model = build_tiny("w4a16-g32")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    install_quant_refresh_hook(opt, model)
    loss_of(model, *batch(seed=0)).backward()
    opt.step()
    assert not any(c.is_fresh() for c in caches(model))  # invalidated together, not read
    master = weakref.ref(caches(model)[0].masters[0])
    gc.collect()
    gc.disable()
    try:
        del model, opt
        assert master() is None
    finally:
        gc.enable()


def test_an_overlapped_parameter_gather_is_refused(single_process):
    """The first forward read re-quantizes every layer; with the distributed optimizer's
    all-gather overlapped with the forward, later layers' masters would not have arrived."""
    from types import SimpleNamespace

    model = build_tiny("w4a16-g32")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    wrapped = SimpleNamespace(ddp_config=SimpleNamespace(overlap_param_gather=True))
    with pytest.raises(ValueError, match="overlap_param_gather"):
        install_quant_refresh_hook(opt, [wrapped])
    wrapped.ddp_config.overlap_param_gather = False
    assert len(install_quant_refresh_hook(opt, [wrapped])) == 1


def test_each_re_quantization_is_a_new_generation(single_process):
    """The publisher tells weight versions apart by the generation: a new one after each
    optimizer step's re-quantization, the same one while the masters stay."""
    model = build_tiny("int8", targets="experts")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    install_quant_refresh_hook(opt, model)
    first = {t.name: t.generation for t in iter_quantized_weights(model)}
    assert first and {t.name: t.generation for t in iter_quantized_weights(model)} == first
    loss_of(model, *batch(seed=0)).backward()
    opt.step()
    second = {t.name: t.generation for t in iter_quantized_weights(model)}
    assert second == {name: generation + 1 for name, generation in first.items()}
    assert all(c.generation == c.quantize_count == 2 for c in caches(model))


def test_quantizing_together_leaves_the_fresh_caches_alone(single_process):
    """Only the stale caches of a group are quantized again: a fresh one keeps its weight
    (and its generation, so a publisher does not send it again)."""
    from megatron_qarl.layers.weight_cache import quantize_together

    model = build_tiny("int8", targets="experts")
    fresh, stale = caches(model)[:2]
    kept = fresh.get()
    stale.get()
    stale.invalidate()
    quantize_together([fresh, stale])
    assert fresh.get() is kept and (fresh.quantize_count, fresh.generation) == (1, 1)
    assert stale.is_fresh() and (stale.quantize_count, stale.generation) == (2, 2)
