"""Session 48: training-step A B B A experiments, arms set by patching this project's code.
  refresh (calls 1, 2): the model's weights re-quantized together at the first read after the
    optimizer step (weight_cache.quantize_together: one host sync for all their NaN/inf
    checks), against each at its own first read with its own sync (the `together` argument
    dropped, as before)
  permute (call 4): the dropless permutation on CUDA by nonzero_static of the known count (no
    host sync), against Megatron's masked_select (two syncs a MoE layer; the known count only
    under CUDA-graph capture, as before), and against the known count by a stable argsort
Each run prints how many counted calls (refreshes; permutations by the known count) a step
made, so that an arm that did not swap shows.
Usage: refresh_ab.py EXPERIMENT STEPS LAYERS SCHEMES (timed steps a run after 2 warm-up steps;
LAYERS: that many exact Qwen3-30B-A3B layers at 4 x 1024 tokens, 0 for qwen3-moe-200m at 4 and
32 x 1024; SCHEMES: comma-separated, e.g. w4a16,fp8-block,int8). Calls 1 and 2 ran an earlier
version with the refresh arms alone (refresh_ab.py STEPS LAYERS SCHEMES, at a6e8ee7 and
e58a9df)."""
import os
import statistics
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, "tools")
sys.path.insert(0, "docs/results/lanes_h200_2026-11-29")
from bench_megatron_layers import train  # noqa: E402
from megatron_qarl.layers import token_dispatch, weight_cache  # noqa: E402
from megatron_qarl.models import get_preset  # noqa: E402
from step_ab import qwen3_30b_layers, start  # noqa: E402

counted = [0]


def counting(fn):
    def call(*args, **kwargs):
        counted[0] += 1
        return fn(*args, **kwargs)
    return call


_invalidate = weight_cache.QuantizedWeightCache.invalidate
_quantize_together = weight_cache.quantize_together
_takes_known_count = token_dispatch._takes_known_count
_permute_known_count = token_dispatch.permute_known_count


def refresh_arm(together):
    def arm():
        weight_cache.quantize_together = counting(_quantize_together)
        weight_cache.QuantizedWeightCache.invalidate = _invalidate if together else (
            lambda cache, together=(): _invalidate(cache))
    return arm


def argsort_known_count(tokens, routing_map, probs, num_out_tokens):
    chosen = token_dispatch._expert_major_order(routing_map.T.contiguous().view(-1),
                                                num_out_tokens)
    rows = chosen % routing_map.shape[0]
    return tokens.index_select(0, rows), probs.T.contiguous().view(-1)[chosen], rows


def permute_arm(known_count):
    def arm():
        token_dispatch._takes_known_count = _takes_known_count if known_count else (
            lambda *a: _takes_known_count(*a) and torch.cuda.is_current_stream_capturing())
        token_dispatch.permute_known_count = counting(
            argsort_known_count if known_count == "argsort" else _permute_known_count)
    return arm


EXPERIMENTS = {  # the baseline arm second
    "refresh": {"together": refresh_arm(True), "one a weight": refresh_arm(False)},
    "permute": {"known count (nonzero_static)": permute_arm("nonzero_static"),
                "Megatron's masked_select": permute_arm(None),
                "known count (argsort)": permute_arm("argsort")},
}


def step_ab(arms, steps, preset, batches, schemes):
    order = list(arms)
    for batch in batches:
        for scheme in schemes:
            times = {arm: [] for arm in arms}
            for arm in order + order[::-1]:
                arms[arm]()
                counted[0] = 0
                losses, seconds, *_ = train(preset, scheme, "experts+attention", batch, 1024,
                                            2 + steps, 1e-4, True)
                times[arm].append(statistics.median(seconds[2:]))
                print(f"batch {batch} {scheme} {arm}: {times[arm][-1]:.4f} s/step, "
                      f"{counted[0] / (2 + steps):.1f} counted calls a step, loss "
                      f"{losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
            base = statistics.mean(times[order[1]])
            for arm, ts in times.items():
                print(f"== batch {batch} {scheme} {arm}: {statistics.mean(ts):.4f} s/step "
                      f"({statistics.mean(ts) / base:.3f}x {order[1]}'s)", flush=True)
    arms[order[0]]()


def main(experiment, steps, layers, schemes):
    start()
    schemes = schemes.split(",")
    arms = EXPERIMENTS[experiment]
    if int(layers):
        step_ab(arms, int(steps), qwen3_30b_layers(int(layers)), (4,), schemes)
    else:
        step_ab(arms, int(steps), get_preset("qwen3-moe-200m"), (4, 32), schemes)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    main(*sys.argv[1:])
