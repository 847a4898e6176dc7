"""What the kernel's counts-dependent prologue costs: the stream-only floor kernel as is, and
with the W4A16 kernel's prologue first (load the counts, scan them into the shared-memory
tables, find the first tile: expert_tables, row_tile_count, tile_of) before its first TMA.
Graphs of 10 calls, launched with PDL as both kernels are."""
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from qarl_kernels.bench import TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.gluon_hopper import cta_barrier, expert_tables, row_tile_count, tile_of, \
    wait_for_previous_grid
from qarl_kernels import stream_floor as sf
from qarl_kernels.w4a16_gluon import STAGE_WORDS, _WORD_LAYOUT, _descriptor


@gluon.jit(do_not_specialize=["k_blocks", "num_experts"])
def _stream_tables(desc, out_ptr, k_blocks, counts_ptr, num_experts, E_PAD: gl.constexpr,
                   STAGE_COUNT: gl.constexpr, num_warps: gl.constexpr):
    BN: gl.constexpr = desc.block_type.shape[0]
    WORDS: gl.constexpr = desc.block_type.shape[1]
    wait_for_previous_grid()
    tables = expert_tables(counts_ptr, num_experts, 8, E_PAD, num_warps)
    tiles = row_tile_count(tables, num_warps)
    expert, row_start, row_end, nb = tile_of(tables, gl.program_id(0) % tiles, 1, num_experts,
                                             8, num_warps)
    tile = gl.program_id(0) + (expert + row_start + row_end + nb) * 0
    bufs = gl.allocate_shared_memory(gl.int32, [STAGE_COUNT, BN, WORDS], desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGE_COUNT, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGE_COUNT):
        mbarrier.init(bars.index(i), count=1)
    for i in gl.static_range(STAGE_COUNT - 1):
        if i < k_blocks:
            sf._issue(desc, bufs, bars, tile, i)
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [32 * 4 // WORDS, WORDS // 4], [num_warps, 1],
                                            [1, 0])
    acc = gl.zeros([BN, WORDS], gl.int32, layout)
    for kb in range(k_blocks):
        mbarrier.wait(bars.index(kb % STAGE_COUNT), (kb // STAGE_COUNT) & 1)
        acc = acc ^ bufs.index(kb % STAGE_COUNT).load(layout)
        cta_barrier()
        if kb + STAGE_COUNT - 1 < k_blocks:
            sf._issue(desc, bufs, bars, tile, kb + STAGE_COUNT - 1)
    gl.store(out_ptr + tile, gl.sum(gl.sum(acc, 1), 0))


def stream_tables(words, out, counts):
    rows, width = words.shape
    desc = _descriptor(words, [sf.BLOCK_N, STAGE_WORDS], _WORD_LAYOUT)
    _stream_tables[(rows // sf.BLOCK_N, )](desc, out, width // STAGE_WORDS, counts,
                                          counts.numel(), E_PAD=max(16, 1 << (counts.numel() - 1).bit_length()),
                                          STAGE_COUNT=sf.STAGES, num_warps=4, launch_pdl=True)


for label, e, n, k, m in [("W13 EP8", 16, 1536, 2048, 8), ("W2 EP8", 16, 2048, 768, 8),
                          ("W13 E128", 128, 1536, 2048, 1), ("W2 E128", 128, 2048, 768, 8),
                          ("W13 TP2", 128, 768, 2048, 8)]:
    counts = route(m, e, TOP_K)
    touched = int((counts > 0).sum())
    words = [torch.randint(-2**31, 2**31 - 1, (touched * n, k // 8), dtype=torch.int32,
                           device="cuda") for _ in range(copies_for(touched * n * k // 2))]
    out = torch.empty(touched * n // sf.BLOCK_N, dtype=torch.int32, device="cuda")
    res = {"floor": [], "floor + prologue": []}
    for _ in range(3):
        res["floor"].append(graph_us([lambda w=w: sf.stream_words(w, out) for w in words],
                                     calls=STEP_CALLS))
        res["floor + prologue"].append(graph_us(
            [lambda w=w: stream_tables(w, out, counts) for w in words], calls=STEP_CALLS))
    print(f"{label} M={m} ({touched} experts): " + " | ".join(
        f"{k_} " + " ".join(f"{v:.2f}" for v in vals) for k_, vals in res.items()), flush=True)
