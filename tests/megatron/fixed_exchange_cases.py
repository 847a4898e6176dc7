"""Workers of the fixed-size exchange tests (spawned processes import them by name)."""
import contextlib

import torch
from megatron.core import parallel_state as ps

from megatron_qarl.compat.cpu_testing import init_parallel
from megatron_qarl.layers.fixed_size_dispatch import fixed_size_exchange
from megatron_qarl.quant import get_scheme, ops
from megatron_qarl.rollout.base import SamplingParams
from megatron_qarl.rollout.embedded import EmbeddedEngine
from megatron_qarl.rollout.embedded.decode_graph import CachedForward
from megatron_qarl.rollout.embedded.generate import generate_batch

from parallel_cases import LAYOUTS, load_full_state
from tiny_qwen3 import batch, build_tiny, loss_of


def _reference_state(scheme):
    init_parallel(1, 1, 1, seed=7)
    ref = build_tiny(scheme, moe_aux_loss_coeff=0.0)
    return ref, {n: p.detach().clone() for n, p in ref.named_parameters()}


def _built(layout, scheme, state):
    init_parallel(*LAYOUTS[layout], seed=11)
    model = build_tiny(scheme, moe_aux_loss_coeff=0.0).eval()
    load_full_state(model, state)
    return model


SPLIT_SCHEME = "w4a16-g64"  # expert TP=2 splits the tiny experts' 128 columns of fc2


def exchange_losses(rank, world_size, layouts):
    """Per layout: this rank's no-grad loss through Megatron's all-to-all and through the
    fixed-size exchange; how many rows the first MoE layer's experts saw in each, how many were
    routed, and their routed_share; and the routed_rows each layer gave the experts op."""
    tokens, positions = batch(seed=3, batch_size=2)
    _, state = _reference_state(SPLIT_SCHEME)
    results = {}
    for layout in layouts:
        model = _built(layout, SPLIT_SCHEME, state)
        dp = ps.get_data_parallel_world_size()
        rows = slice(None) if dp == 1 else slice(ps.get_data_parallel_rank(),
                                                 ps.get_data_parallel_rank() + 1)
        seen, hints = [], []
        experts = next(m for m in model.modules() if type(m).__name__ == "MoELayer").experts
        hook = experts.register_forward_hook(lambda m, args, _out: seen.append(
            (args[0].shape[0], int(args[1].sum()), m.routed_share)))
        with torch.no_grad(), _recording_routed_rows(hints):
            plain = loss_of(model, tokens[rows], positions[rows]).item()
            with fixed_size_exchange(model):
                fixed = loss_of(model, tokens[rows], positions[rows]).item()
            again = loss_of(model, tokens[rows], positions[rows]).item()  # dispatchers restored
        hook.remove()
        results[layout] = (plain, fixed, again, seen, hints)
    return results


@contextlib.contextmanager
def _recording_routed_rows(hints):
    """The experts op of SPLIT_SCHEME on CPU, appending the routed_rows each call is given."""
    def recorder(*args, routed_rows):
        hints.append(routed_rows)
        return ops.composed_swiglu_experts(*args, routed_rows=routed_rows)

    key = (type(get_scheme(SPLIT_SCHEME)).__name__, "cpu")
    ops._SWIGLU_EXPERTS[key] = recorder
    try:
        yield
    finally:
        del ops._SWIGLU_EXPERTS[key]


PROMPTS = {0: [[5, 9, 11], [7, 3, 3, 8, 20, 4, 4], [6, 1, 2, 2, 9]],  # rank: its prompts
           1: [[12, 4, 4, 30, 2, 8, 8, 1, 3]]}


def lockstep_generation(rank, world_size):
    """EP=2, each rank with its own prompts (different counts and lengths): greedy tokens
    through the all-to-all, with the decode steps through the fixed-size exchange, through the
    engine in batches of 2 (different numbers of batches), and on one rank (EP=1)."""
    params = SamplingParams(top_k=1, max_new_tokens=6)
    prompts = PROMPTS[rank]

    def generate(model, sync_group):
        return [s.response_ids for s in generate_batch(
            model, prompts, params, 0, torch.Generator().manual_seed(0), "cpu",
            sync_group=sync_group)]

    ref, state = _reference_state("w4a16")
    single = generate(ref.eval(), None)
    model = _built("ep2", "w4a16", state)
    group = ps.get_data_parallel_group()
    plain = generate(model, group)
    eager_call = CachedForward.__call__

    def decode_steps_exchange_fixed(forward, ids, start, last_only=False):  # as captured
        if start == 0:
            return eager_call(forward, ids, start, last_only)
        with fixed_size_exchange(forward.model):
            return eager_call(forward, ids, start, last_only)

    CachedForward.__call__ = decode_steps_exchange_fixed
    try:
        fixed = generate(model, group)
    finally:
        CachedForward.__call__ = eager_call
    # batches of 2: rank 0 runs two, rank 1 joins the second with no prompts of its own
    engine = EmbeddedEngine(model, pad_id=0, max_batch=2, seed=0, device="cpu",
                            sync_group=group)
    batched = [g[0].response_ids for g in engine.generate(prompts, params)]
    return single, plain, fixed, batched
