"""The embedded engine on a tiny Megatron Qwen3-MoE model on CPU: KV-cache decoding matches
full recomputation, and its sampler logprobs equal the learner's recomputed ones; a separate
rollout scheme keeps its own quantized copy that publishing refreshes; the routes it records
are the routers' choices, and replaying them makes the learner route like the sampler."""
import dataclasses

import pytest
import torch

from megatron_qarl.compat.cpu_testing import init_parallel
from megatron_qarl.layers import invalidate_quantized_weights
from megatron_qarl.models import QWEN3_MOE_TINY, build_model
from megatron_qarl.quant import ops
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import EmbeddedEngine
from megatron_qarl.rollout.embedded.decode_graph import CachedForward, graph_blocker
from megatron_qarl.rollout.embedded.generate import causal_mask
from megatron_qarl.rollout.routing_replay import record_routing
from megatron_qarl.trainer.batches import collate
from megatron_qarl.trainer.logprobs import response_logprobs

VOCAB = 128


@pytest.fixture(scope="module")
def config():
    init_parallel(seed=5)
    return QWEN3_MOE_TINY.transformer_config(tp=1, ep=1, etp=1, params_dtype=torch.float32,
                                             use_cpu_initialization=True)


@pytest.fixture(scope="module")
def replay_config():
    init_parallel(seed=5)
    return QWEN3_MOE_TINY.transformer_config(tp=1, ep=1, etp=1, params_dtype=torch.float32,
                                             use_cpu_initialization=True,
                                             moe_enable_routing_replay=True)


def _model(config, scheme):
    torch.manual_seed(0)
    return build_model(config, scheme, vocab_size=VOCAB, max_sequence_length=64)


def _routers(model):
    return [m for m in model.modules() if getattr(m, "router_replay", None) is not None]


def test_greedy_kv_cache_decoding_equals_full_recompute(config):
    model = _model(config, "w4a16").eval()
    engine = EmbeddedEngine(model, pad_id=0, max_batch=8, seed=1, device="cpu")
    prompts = [[5, 9, 11], [7, 3, 3, 8, 20]]  # different lengths: right-padded batch
    params = SamplingParams(top_k=1, max_new_tokens=6, stop_token_ids=(1,))
    samples = [g[0] for g in engine.generate(prompts, params)]
    with torch.no_grad():
        for prompt, sample in zip(prompts, samples):
            seq = list(prompt)
            for _ in range(len(sample.response_ids)):
                ids = torch.tensor([seq])
                logits = model(ids, torch.arange(len(seq))[None], causal_mask(len(seq), "cpu"))
                seq.append(int(logits[0, -1].argmax()))
            assert seq[len(prompt):] == sample.response_ids
            stopped = sample.response_ids[-1] == 1 and len(sample.response_ids) < 6
            assert sample.finish_reason == ("stop" if stopped else "length")


def test_windows_make_logits_of_their_last_position_only_and_finish_as_sglang(config,
                                                                             monkeypatch):
    """The prompt window's logits were [batch, prompt, vocab] (40 GB of bf16 at 256 x 512
    prompts and Qwen3's 151936 rows) for the one position sampled from, with and (until
    2026-12-01) without sequence parallelism's padding: its prompt window is now cut to a
    multiple of the TP size (here 2) and needs none, and only the padded single-token windows
    make all their (2) positions' logits. The samples are those of unpadded windows (the
    steps that finish the cut prompt window draw nothing). And a
    stop token in the last allowed slot finishes by length, as SGLang's check_finished says."""
    from megatron_qarl.rollout.embedded import generate

    model = _model(config, "none").eval()
    shapes = []
    call = CachedForward.__call__

    def recorded(self, ids, start, last_only=False):
        logits = call(self, ids, start, last_only)
        shapes.append(tuple(logits.shape))
        return logits

    monkeypatch.setattr(CachedForward, "__call__", recorded)
    prompts = [[5, 9, 11, 4, 6], [7, 3, 3, 8, 20, 2, 9]]
    greedy = SamplingParams(top_k=1, max_new_tokens=3)
    first = generate.generate_batch(model, prompts, greedy, 0, torch.Generator(), "cpu")
    assert shapes[0] == (2, 1, VOCAB) and all(s == (2, 1, VOCAB) for s in shapes)
    sampled = SamplingParams(temperature=1.0, max_new_tokens=6)
    unpadded = generate.generate_batch(model, prompts, sampled, 0,
                                       torch.Generator().manual_seed(3), "cpu")
    shapes.clear()
    padded = generate.generate_batch(model, prompts, sampled, 0,
                                     torch.Generator().manual_seed(3), "cpu", window_multiple=2)
    assert shapes[0] == (2, 1, VOCAB) and all(s == (2, 2, VOCAB) for s in shapes[1:])
    for one, other in zip(unpadded, padded):  # the same draws: the same samples
        assert one.response_ids == other.response_ids
        torch.testing.assert_close(one.sampler_logprobs, other.sampler_logprobs, rtol=0,
                                   atol=1e-5)
    one = dataclasses.replace(greedy, max_new_tokens=1, stop_token_ids=(first[0].response_ids[0],))
    (again,) = generate.generate_batch(model, prompts[:1], one, 0, torch.Generator(), "cpu")
    assert again.response_ids == first[0].response_ids[:1]  # the stop token, in the last slot
    assert again.finish_reason == "length"


def test_positioned_cache_gives_megatrons_static_cache_logits(config):
    """The cache a CUDA graph can replay (fixed shapes, positions on the device) against
    Megatron's StaticInferenceContext: a prompt window, then single-token steps, reading the
    cache in buckets of 3 keys."""
    from megatron.core.inference.contexts import StaticInferenceContext

    model = _model(config, "w4a16").eval()
    tokens = torch.tensor([[5, 9, 11, 4, 7, 30, 2, 8], [7, 3, 3, 8, 20, 6, 1, 9]])
    room = tokens.shape[1]
    ours = CachedForward(model, 2, room, "cpu", graph=False, key_bucket=3)  # 3, 6, 8 keys
    megatron = StaticInferenceContext(2, room)
    megatron.materialize_only_last_token_logits = False
    mask = causal_mask(room, "cpu")
    with torch.no_grad():
        for start, end in [(0, 3)] + [(p, p + 1) for p in range(3, room)]:
            want = model(tokens[:, start:end], torch.arange(start, end).expand(2, -1),
                         mask[..., start:end, :end], inference_context=megatron,
                         runtime_gather_output=True)
            megatron.increment_sequence_len_offset(end - start)
            got = ours(tokens[:, start:end], start)
            torch.testing.assert_close(got, want, rtol=0, atol=1e-5)


def test_graph_blocker_names_what_keeps_decoding_eager(config):
    quantized, bf16 = _model(config, "w4a16"), _model(config, "none")
    assert graph_blocker(quantized, "cuda") is None
    assert "CUDA" in graph_blocker(quantized, "cpu")
    assert "SequentialMLP" in graph_blocker(bf16, "cuda")
    dropping = _model(dataclasses.replace(config, moe_expert_capacity_factor=1.0), "w4a16")
    assert "moe_expert_capacity_factor" in graph_blocker(dropping, "cuda")


def test_experts_on_transformer_engine_keep_decoding_eager(config, monkeypatch):
    """TE's grouped GEMM reads the tokens per expert on the host (a list of splits), which a
    capture cannot do: FP8 experts on TE decoded through graphs by default (not run: TE is
    installed on no machine here; this is the registered op's marker)."""
    from megatron_qarl.layers.te_fp8 import TEFP8BlockOps
    from megatron_qarl.quant import FP8Block

    fp8 = _model(config, "fp8-block")
    assert graph_blocker(fp8, "cuda") is None
    te_ops = TEFP8BlockOps.__new__(TEFP8BlockOps)  # its TE imports are not needed here
    monkeypatch.setitem(ops._GROUPED, ops._key(FP8Block, "cuda"), te_ops.grouped)
    assert "TransformerEngine's grouped GEMM" in graph_blocker(fp8, "cuda")


def test_sampler_logprobs_match_learner_recompute(config):
    model = _model(config, "w4a16")
    engine = EmbeddedEngine(model, pad_id=0, max_batch=16, seed=3, device="cpu")
    params = SamplingParams(temperature=0.7, max_new_tokens=5, n=4)
    groups = engine.generate([[4, 5, 6], [9, 8]], params)
    assert [len(g) for g in groups] == [4, 4]
    samples = [s for g in groups for s in g]
    batch = collate(samples, torch.zeros(len(samples)), 0, "cpu")
    with torch.no_grad():
        learner = response_logprobs(model, batch, temperature=0.7)
    torch.testing.assert_close(learner[batch.mask], batch.sampler_logprobs[batch.mask],
                               atol=1e-4, rtol=0)


def test_separate_rollout_scheme_gets_published_master_weights(config):
    learner, rollout = _model(config, "none"), _model(config, "w4a16")
    with torch.no_grad():
        for p in rollout.parameters():
            p.add_(1.0)  # make the copy visibly different before publishing
    engine = EmbeddedEngine(rollout, pad_id=0, max_batch=8, seed=0, device="cpu",
                            on_weights_loaded=invalidate_quantized_weights)
    engine.publish_weights(learner, version=3)
    assert engine.weight_version == 3
    mine = dict(rollout.named_parameters())
    for name, p in learner.named_parameters():
        torch.testing.assert_close(mine[name], p, rtol=0, atol=0)
    ids = torch.tensor([[4, 5, 6, 7]])
    with torch.no_grad():
        out_l = learner(ids, torch.arange(4)[None], causal_mask(4, "cpu"))
        out_r = rollout(ids, torch.arange(4)[None], causal_mask(4, "cpu"))
    # same masters, different forward: W4A16 experts in the rollout copy only
    assert not torch.equal(out_l, out_r)
    assert (out_l - out_r).abs().max() < 1.0


def test_decoding_builds_no_autograd_graph(config):
    """The engine decodes with the learner's own (grad-requiring) parameters: without no_grad
    each step's graph stayed alive through the KV cache (OOM on a 30B-A3B-width layer)."""
    model = _model(config, "none")
    logits_need_grad = []
    model.register_forward_hook(lambda m, i, out: logits_need_grad.append(out.requires_grad))
    engine = EmbeddedEngine(model, pad_id=0, max_batch=4, seed=2, device="cpu")
    engine.generate([[4, 5, 6]], SamplingParams(max_new_tokens=3, n=2))
    assert logits_need_grad and not any(logits_need_grad)


def test_an_empty_prompt_is_named(config):
    """It failed on a reshape of 0 elements deep in attention."""
    engine = EmbeddedEngine(_model(config, "none"), pad_id=0, max_batch=4, seed=2, device="cpu")
    with pytest.raises(ValueError, match="prompt 1 has no tokens"):
        engine.generate([[4, 5], []], SamplingParams(max_new_tokens=2))


def test_a_row_decodes_in_a_batch_as_alone_and_length_means_every_token(config):
    """The longer prompt's row draws (and drops) a token at its third prompt token while the
    batch decodes the shorter one: stop there must not end it. Without stop tokens every row
    runs to max_new_tokens: one row finishing must not end the others."""
    model = _model(config, "w4a16").eval()
    short, long = [5, 9, 11], [7, 3, 3, 8, 20]
    with torch.no_grad():
        drawn = int(model(torch.tensor([long[:3]]), torch.arange(3)[None],
                          causal_mask(3, "cpu"))[0, -1].argmax())
    params = SamplingParams(top_k=1, max_new_tokens=6, stop_token_ids=(drawn,))
    engine = EmbeddedEngine(model, pad_id=0, max_batch=8, seed=1, device="cpu")
    both = engine.generate([short, long], params)
    alone = engine.generate([long], params)[0][0]
    assert (both[1][0].response_ids, both[1][0].finish_reason) == (alone.response_ids,
                                                                   alone.finish_reason)
    plain = engine.generate([short, long], SamplingParams(top_k=1, max_new_tokens=6))
    assert [(len(g[0].response_ids), g[0].finish_reason) for g in plain] == [(6, "length")] * 2


def test_groups_hold_their_own_prompts_samples_and_the_published_version(config):
    """The trainer pairs each group with its prompt's answer by position."""
    model = _model(config, "none").eval()
    engine = EmbeddedEngine(model, pad_id=0, max_batch=16, seed=3, device="cpu")
    engine.publish_weights(model, version=5)
    prompts = [[4, 5, 6], [9, 8], [7]]
    groups = engine.generate(prompts, SamplingParams(max_new_tokens=2, n=3))
    assert [[s.prompt_ids for s in g] for g in groups] == [[p] * 3 for p in prompts]
    assert {s.weight_version for g in groups for s in g} == {5}


def test_recorded_routes_are_the_routers_choices_for_every_forwarded_token(replay_config):
    model = _model(replay_config, "w4a16").eval()
    engine = EmbeddedEngine(model, pad_id=0, max_batch=8, seed=4, device="cpu",
                            record_routes=True)
    prompts = [[5, 9, 11], [7, 3, 3, 8, 20], [6]]  # the longer prompts end inside decoding
    samples = [g[0] for g in engine.generate(prompts, SamplingParams(max_new_tokens=5))]
    layers, top_k = len(_routers(model)), replay_config.moe_router_topk
    for sample in samples:
        seq = sample.prompt_ids + sample.response_ids
        assert sample.routed_experts.shape == (len(seq) - 1, layers, top_k)
        with torch.no_grad(), record_routing(model, 1, len(seq) - 1) as recorder:
            model(torch.tensor([seq[:-1]]), torch.arange(len(seq) - 1)[None],
                  causal_mask(len(seq) - 1, "cpu"))
            recorder.keep(0, len(seq) - 1)
            full = recorder.routes()[0]
        assert torch.equal(sample.routed_experts, full)
    assert all(r.router_replay.router_replay_action is None for r in _routers(model))


def test_recorded_routes_are_what_each_router_chose_layer_by_layer(replay_config):
    """Against the routers' own routing maps (forward hooks), not a second recorder: a batch
    of two, prompts of 3 and 5 tokens, so the prompt window holds several tokens a row."""
    model = _model(replay_config, "w4a16").eval()
    engine = EmbeddedEngine(model, pad_id=0, max_batch=8, seed=4, device="cpu",
                            record_routes=True)
    samples = [g[0] for g in engine.generate([[5, 9, 11], [7, 3, 3, 8, 20]],
                                             SamplingParams(max_new_tokens=4))]
    for sample in samples:
        seq = sample.prompt_ids + sample.response_ids
        maps = []
        hooks = [r.register_forward_hook(lambda _, __, out: maps.append(out[1]))
                 for r in _routers(model)]
        with torch.no_grad():
            model(torch.tensor([seq[:-1]]), torch.arange(len(seq) - 1)[None],
                  causal_mask(len(seq) - 1, "cpu"))
        for hook in hooks:
            hook.remove()
        assert len(maps) == sample.routed_experts.shape[1]
        for layer, routing_map in enumerate(maps):  # [tokens, experts] bool
            chosen = torch.zeros_like(routing_map).scatter_(
                -1, sample.routed_experts[:, layer].long(), True)
            assert torch.equal(chosen, routing_map), layer


def test_replay_makes_the_learner_route_like_the_sampler(replay_config):
    """The sampler's routers are perturbed so it routes differently from the learner; with
    the recorded routes replayed, every real token of the learner's forward takes the
    sampler's experts. Two models built with RouterReplay: each addresses its own routers."""
    learner, rollout = _model(replay_config, "w4a16"), _model(replay_config, "w4a16")
    with torch.no_grad():
        for router in _routers(rollout):
            router.weight.add_(torch.randn_like(router.weight))
    engine = EmbeddedEngine(rollout, pad_id=0, max_batch=8, seed=0, device="cpu",
                            record_routes=True)
    samples = [g[0] for g in engine.generate([[4, 5, 6], [9, 8]],
                                             SamplingParams(max_new_tokens=5))]
    seen = []
    hooks = [r.register_forward_hook(lambda m, i, out: seen.append(out[1]))
             for r in _routers(learner)]

    def learner_routes(routing):
        seen.clear()
        batch = collate(samples, torch.zeros(len(samples)), 0, "cpu",
                        replay_experts=replay_config.num_moe_experts if routing else None)
        with torch.no_grad():
            response_logprobs(learner, batch, temperature=1.0)
        # routing maps [seq * batch, experts] -> per sample [seq, layers, experts]
        maps = torch.stack(seen, dim=1).view(batch.input_ids.shape[1], len(samples),
                                             len(seen), -1)
        return maps.transpose(0, 1)

    def sampler_maps(sample, experts):
        routed = sample.routed_experts.long()
        return torch.zeros(*routed.shape[:2], experts, dtype=torch.bool).scatter_(-1, routed, True)

    own, replayed = learner_routes(False), learner_routes(True)
    for hook in hooks:
        hook.remove()
    experts = own.shape[-1]
    differs = False
    for b, sample in enumerate(samples):
        want = sampler_maps(sample, experts)
        n = want.shape[0]
        assert torch.equal(replayed[b, :n], want)
        differs |= not torch.equal(own[b, :n], want)
    assert differs  # the perturbation did change the learner's own routing


NEW_TOKENS = 300  # for the GPU test: two key buckets (decode_graph.KEY_BUCKET)


def _graph_and_eager_samples(scheme: str, grouped: bool, results) -> None:
    """In a fresh process (the CPU tests patch Megatron to allocate on the CPU): the same
    generation with the decode graph and without, and how often a graph replayed."""
    import torch.distributed as dist
    from megatron.core import parallel_state, tensor_parallel


    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(5)
    config = QWEN3_MOE_TINY.transformer_config(tp=1, ep=1, etp=1, params_dtype=torch.bfloat16,
                                               moe_enable_routing_replay=True)
    torch.manual_seed(0)
    model = build_model(config, scheme, vocab_size=VOCAB, max_sequence_length=64,
                        grouped_experts=grouped).eval()
    replays, replay = [], torch.cuda.CUDAGraph.replay
    torch.cuda.CUDAGraph.replay = lambda graph: replays.append(1) or replay(graph)
    prompts = [[5, 9, 11], [7, 3, 3, 8, 20], [6]]
    params = SamplingParams(temperature=1.0, max_new_tokens=NEW_TOKENS)
    for graph in (False, True):
        engine = EmbeddedEngine(model, pad_id=0, max_batch=8, seed=7, device="cuda",
                                record_routes=True, cuda_graph=graph)
        samples = [g[0] for g in engine.generate(prompts, params)]
        results.put((engine.cuda_graph, len(replays),
                     [(s.response_ids, s.sampler_logprobs, s.routed_experts) for s in samples]))
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    engine.generate(prompts, params)  # a second graph: the first one's memory is all back
    torch.cuda.synchronize()
    results.put(torch.cuda.memory_allocated() - before)
    dist.destroy_process_group()


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="CUDA graphs need a GPU (run on the GPU machine)")
@pytest.mark.parametrize("scheme, grouped", [("w4a16", False), ("fp8-block", False),
                                             ("none", True)])
def test_cuda_graph_decoding_equals_eager_decoding(scheme, grouped):
    """Same seed, graph on and off: the same tokens, logprobs and recorded routes, bit for
    bit; the graph really replayed the decode steps, and a later batch's graph leaves no
    memory behind. ("none", grouped): the bf16 baseline with --moe-grouped-gemm."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    child = context.Process(target=_graph_and_eager_samples, args=(scheme, grouped, results))
    child.start()
    (eager_on, eager_replays, eager), (graph_on, graph_replays, graphed), growth = (
        results.get(timeout=300), results.get(timeout=300), results.get(timeout=300))
    child.join(timeout=60)
    assert child.exitcode == 0
    assert growth == 0  # nothing of a batch's graph outlives it (a stream per batch leaked)
    assert (eager_on, graph_on) == (False, True)
    # prompt window [0, 1), then one step per position 1 .. 5 + NEW_TOKENS - 2, each a replay
    # but the first: the warm-up step the first capture needs. The second key bucket (from 256
    # keys) captures at its first step, without one
    assert eager_replays == 0 and graph_replays == 5 + NEW_TOKENS - 3
    for (tokens, logprobs, routes), (g_tokens, g_logprobs, g_routes) in zip(eager, graphed):
        assert tokens == g_tokens
        assert logprobs == g_logprobs
        assert torch.equal(routes, g_routes)


def test_bf16_models_hand_the_sampler_and_learner_bf16_logits(config, monkeypatch):
    """Float16Module (--bf16) upcasts the logits to fp32 unless asked not to; the engine and
    the learner ask. The rows are cast to fp32 inside, exactly, so the learner's logprobs and
    gradients keep the bits of fp32 logits, and the sampler's logprobs still equal them."""
    from megatron.core.transformer.module import Float16Module

    from megatron_qarl.rollout.embedded.decode_graph import logits_in_model_dtype
    from megatron_qarl.trainer import logprobs as learner_logprobs

    model = Float16Module(dataclasses.replace(config, bf16=True), _model(config, "none"))
    assert logits_in_model_dtype(model) == {"fp32_output": False}
    assert logits_in_model_dtype(model.module) == {}
    ids = torch.tensor([[4, 5, 6, 7]])
    with torch.no_grad():
        logits = model(ids, torch.arange(4)[None], causal_mask(4, "cpu"),
                       **logits_in_model_dtype(model))
    assert logits.dtype == torch.bfloat16

    engine = EmbeddedEngine(model, pad_id=0, max_batch=8, seed=3, device="cpu")
    samples = [s for g in engine.generate([[4, 5, 6], [9, 8]],
                                          SamplingParams(temperature=0.7, max_new_tokens=4, n=2))
               for s in g]
    batch = collate(samples, torch.zeros(len(samples)), 0, "cpu")

    def logprobs_and_grads():
        model.zero_grad()
        lp = response_logprobs(model, batch, temperature=0.7)
        lp[batch.mask].sum().backward()
        return lp.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    lp_bf16, grads_bf16 = logprobs_and_grads()
    monkeypatch.setattr(learner_logprobs, "logits_in_model_dtype", lambda model: {})
    lp_fp32, grads_fp32 = logprobs_and_grads()
    assert torch.equal(lp_bf16, lp_fp32)
    assert len(grads_bf16) == len(grads_fp32) > 10
    assert all(torch.equal(a, b) for a, b in zip(grads_bf16, grads_fp32))
    torch.testing.assert_close(lp_bf16[batch.mask], batch.sampler_logprobs[batch.mask],
                               atol=1e-4, rtol=0)
