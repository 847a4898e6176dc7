"""How the benchmark and the tile sweep (tune.py) measure: MoE routing, weight copies rotated
past L2, medians of do_bench, CUDA graphs of a decode step, the ceilings and the launch floor.

Weights are rotated over enough copies (> 2x L2) that no timed call reads them from cache.
"""
import math
import statistics

import torch
import triton

#: decode batch sizes: timed in CUDA graphs by the benchmark and the tile sweep, since under
#: ~60 us of GPU work do_bench times the host launch of the Triton wrapper
DECODE_MAX_TOKENS = 256
#: calls per captured graph in the decode timings (graph_us): a decode step's kernels run back to
#: back in one graph
STEP_CALLS = 10
#: graph_us times this many batches of replays and takes the median of their means
GRAPH_BATCHES = 10
GRAPH_BATCH_REPLAYS = 20
L2_BYTES = 50 * 2**20
ROTATE_BYTES = 2.4 * L2_BYTES


def route(tokens: int, experts: int, top_k: int, seed: int = 0, skew: float = 0.0,
          device: str = "cuda", local: int | None = None) -> torch.Tensor:
    """Counts per expert of top-k routing (each token picks k distinct experts). skew = 0:
    uniform. skew > 0: expert e is drawn in proportion to exp(skew * z_e), z_e ~ N(0, 1) fixed
    per seed (Gumbel top-k, i.e. sampling without replacement), as a trained router's uneven
    load; 0.5 puts about 4x the mean on the busiest expert of 128 from 256 tokens on.
    local: keep only the counts of the first `local` experts, one rank's share under expert
    parallelism when every rank sees all the tokens."""
    g = torch.Generator(device=device).manual_seed(seed)
    u = torch.rand(tokens, experts, generator=g, device=device)
    popularity = skew * torch.randn(experts, generator=g, device=device)
    scores = popularity - torch.log(-torch.log(u))  # monotonic in u: skew 0 is rand().topk
    chosen = scores.topk(min(top_k, experts), dim=1).indices.flatten()
    return torch.bincount(chosen, minlength=experts)[:local].to(torch.int32)


def copies_for(nbytes: int) -> int:
    return max(1, math.ceil(ROTATE_BYTES / max(1, nbytes)))


def median_us(fns) -> float:
    """Median time of calling fns round-robin (one call per timed iteration)."""
    state = {"i": 0}

    def step():
        fns[state["i"] % len(fns)]()
        state["i"] += 1

    return triton.testing.do_bench(step, warmup=25, rep=150, return_mode="median") * 1e3


def graph_us(fns, calls: int = 1) -> float:
    """Time per call of CUDA graphs holding `calls` calls each of fns (round-robin): latency
    without host launch cost, the median of GRAPH_BATCHES batches' means, so that a host stall
    or a clock change in one batch does not move it. A decoding engine captures its whole step
    in one graph, so its kernels run back to back: with one call per graph every call also
    pays the graph's own launch gap (about 2.5 us on the H100, docs/kernel_rounds.md round
    10), hence STEP_CALLS."""
    groups = [[fns[(i * calls + j) % len(fns)] for j in range(calls)] for i in range(len(fns))]
    _warm_up(fns)
    graphs = []
    for group in groups:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for fn in group:
                fn()
        graphs.append(g)
    for g in graphs:
        g.replay()
    # an event between batches, all queued back to back: no batch waits for the host
    events = [torch.cuda.Event(enable_timing=True) for _ in range(GRAPH_BATCHES + 1)]
    torch.cuda.synchronize()
    events[0].record()
    for b in range(GRAPH_BATCHES):
        for i in range(GRAPH_BATCH_REPLAYS):
            graphs[(b * GRAPH_BATCH_REPLAYS + i) % len(graphs)].replay()
        events[b + 1].record()
    torch.cuda.synchronize()
    batch_ms = [start.elapsed_time(end) for start, end in zip(events, events[1:])]
    return statistics.median(batch_ms) * 1e3 / (GRAPH_BATCH_REPLAYS * calls)


def graph_output(fn) -> torch.Tensor:
    """What fn returns when a CUDA graph of it replays. A capture may take other kernels than an
    eager call (the W4A16 GEMMs pick their Gluon tiles by capture state), so the checks of the
    cells graph_us times read this."""
    _warm_up([fn])
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    graph.replay()
    torch.cuda.synchronize()
    return out.clone()


def _warm_up(fns):
    """One eager call of each on a side stream, as capture needs: compilation, buffers made at
    first use, the lane-order codes the Gluon kernels read."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for fn in fns:
            fn()
    torch.cuda.current_stream().wait_stream(stream)


def ceilings() -> dict:
    """Measured device-to-device copy bandwidth (read + write) and bf16 8192^3 matmul rate."""
    a = torch.empty(2**30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    copy_us = median_us([lambda: b.copy_(a)])
    m = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    mm_us = median_us([lambda: m @ m])
    return {"copy_GBps": 2 * 2**30 / copy_us / 1e3, "bf16_TFLOPs": 2 * 8192**3 / mm_us / 1e6}


def launch_floor():
    """Time per call of one tiny kernel: one per graph, and STEP_CALLS per graph."""
    z = torch.zeros(1, device="cuda")
    return graph_us([lambda: z.add_(1)]), graph_us([lambda: z.add_(1)], calls=STEP_CALLS)
