"""CUDA-graphed decode steps under tensor and expert parallelism (2 GPUs; skipped with fewer).

The graphed steps exchange MoE tokens in fixed sizes (layers/fixed_size_dispatch.py), so they
are compared bit for bit with eager decode steps that exchange them the same way, and with
Megatron's all-to-all on the tokens sampled from the prompt window (the all-to-all in both)."""
import multiprocessing

import pytest
import torch

from megatron_qarl.models import QWEN3_MOE_TINY, build_model
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import EmbeddedEngine
from megatron_qarl.rollout.embedded.decode_graph import CachedForward
from megatron_qarl.layers.fixed_size_dispatch import fixed_size_exchange

NEW_TOKENS = 300  # two key buckets (decode_graph.KEY_BUCKET)
LAYOUTS = {  # name: (tp, ep, etp, scheme)
    "ep2": (1, 2, 1, "w4a16"),
    "tp2": (2, 1, 1, "w4a16"),  # attention TP only: the experts' tokens stay on their rank
    "tp2-etp2": (2, 1, 2, "w4a16-g64"),  # expert TP halves fc2's 128 columns
    "tp2-ep2": (2, 2, 1, "w4a16"),  # the 8-GPU layout's pattern: EP over the TP ranks
}
PROMPTS = [[[5, 9, 11], [7, 3, 3, 8, 20], [6]],  # data-parallel rank: its prompts
           [[12, 4, 4, 30, 2, 8], [2, 2]]]


def _decode_steps_exchange_fixed(eager_call):
    def call(forward, ids, start, last_only=False):
        if start == 0:
            return eager_call(forward, ids, start, last_only)
        with fixed_size_exchange(forward.model):
            return eager_call(forward, ids, start, last_only)
    return call


def _samples(rank: int, world_size: int, init_file: str, layout: str, results) -> None:
    import torch.distributed as dist
    from megatron.core import parallel_state, tensor_parallel

    tp, ep, etp, scheme = LAYOUTS[layout]
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                            world_size=world_size)
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=tp,
                                             expert_model_parallel_size=ep,
                                             expert_tensor_parallel_size=etp)
    tensor_parallel.model_parallel_cuda_manual_seed(5)
    config = QWEN3_MOE_TINY.transformer_config(params_dtype=torch.bfloat16,
                                               moe_enable_routing_replay=True)
    torch.manual_seed(0)
    model = build_model(config, scheme, vocab_size=128, max_sequence_length=64).eval()
    replays, replay = [], torch.cuda.CUDAGraph.replay
    torch.cuda.CUDAGraph.replay = lambda graph: replays.append(1) or replay(graph)
    dp_rank = parallel_state.get_data_parallel_rank()
    sync_group = parallel_state.get_data_parallel_group() if ep > 1 else None
    params = SamplingParams(temperature=1.0, max_new_tokens=NEW_TOKENS)
    eager_call, out = CachedForward.__call__, {}
    for run in ("all-to-all", "fixed", "graph"):
        engine = EmbeddedEngine(model, pad_id=0, max_batch=8, seed=7, device="cuda",
                                window_multiple=tp, sync_group=sync_group, record_routes=True,
                                cuda_graph=run == "graph")
        if run == "fixed":
            CachedForward.__call__ = _decode_steps_exchange_fixed(eager_call)
        samples = [g[0] for g in engine.generate(PROMPTS[dp_rank], params)]
        CachedForward.__call__ = eager_call
        out[run] = (engine.cuda_graph, len(replays),
                    [(s.response_ids, s.sampler_logprobs, s.routed_experts) for s in samples])
    results[rank] = out
    dist.destroy_process_group()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs (the GPU machine)")
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_graphed_decode_under_parallelism_equals_eager_steps(layout, tmp_path):
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        results = manager.dict()
        init_file = str(tmp_path / "init")  # a rendezvous file: no port to race for
        children = [context.Process(target=_samples, args=(rank, 2, init_file, layout, results))
                    for rank in range(2)]
        for child in children:
            child.start()
        for child in children:
            child.join(timeout=600)
        assert [child.exitcode for child in children] == [0, 0]
        results = dict(results)
    for rank, out in results.items():
        (a2a_on, _, a2a), (fixed_on, fixed_replays, fixed), (graph_on, replays, graphed) = (
            out["all-to-all"], out["fixed"], out["graph"])
        assert (a2a_on, fixed_on, graph_on) == (False, False, True)
        assert fixed_replays == 0 and replays >= NEW_TOKENS  # bucket entries run eagerly
        for (tokens, logprobs, routes), (g_tokens, g_logprobs, g_routes) in zip(fixed, graphed):
            assert tokens == g_tokens, (rank, layout)
            assert logprobs == g_logprobs, (rank, layout)
            assert torch.equal(routes, g_routes), (rank, layout)
        # a row of the shortest prompt samples its first token from the prompt window's logits
        prompts = PROMPTS[rank if layout == "ep2" else 0]
        for prompt, (tokens, logprobs, _), (g_tokens, g_logprobs, _) in zip(prompts, a2a, graphed):
            if len(prompt) == min(map(len, prompts)):
                assert (tokens[0], logprobs[0]) == (g_tokens[0], g_logprobs[0]), (rank, layout)
