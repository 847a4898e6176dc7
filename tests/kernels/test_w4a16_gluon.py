"""The Gluon W4A16 grouped GEMM (Hopper only). Gluon has no CPU interpreter, so CI compiles it
for sm_90 offline (the GPU code is built, not run); on an H100 the same tests check it against
the reference."""
import re

import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import reference_gated_activation
from qarl_kernels import w4a16_gluon as wg
from qarl_kernels.w4a16_lanes import has_lane_codes
from qarl_kernels.gluon_hopper import table_size
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon_rules import gluon_tiles
from sm90_ptx import facts_of_child, ptx_counts, sass, sass_facts, serve_facts

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
# (block_m, block_n, stages, register cap, persistent CTAs per SM)
TILES = [(16, 64, 3, None, None), (16, 128, 3, None, None), (16, 128, 3, 128, None),
         (16, 128, 2, 96, None), (32, 128, 3, 128, None), (64, 64, 3, None, None),
         (64, 128, 2, None, None), (64, 128, 3, None, None), (128, 64, 2, None, None),
         (128, 128, 2, None, None),
         # persistent: one CTA per SM walks many tiles, across experts
         (16, 128, 3, None, 3), (64, 128, 3, None, 1), (16, 64, 2, None, 2),
         # 8-token x tiles (wgmma n = 8)
         (8, 64, 3, None, None), (8, 128, 3, None, 3), (8, 64, 4, None, 3)]
COMPILED = sorted({t[:3] + (int(t[4] is not None), ) for t in TILES})


def _compile_for_sm90(block_m: int, block_n: int, stages: int, persistent: int,
                      swiglu: int, x_async: int = 0, e_pad: int = table_size(16), tail: int = 0,
                      groups: int = 1, release: int = 0, early_words: int = 0,
                      refill_first: int = 0, split_k: int = 1, probs: int = 0,
                      maxnreg: int = 0, stage_acc: int = 0) -> dict:
    """PTX facts of the kernel built for sm_90a (W13 EP8 shapes; e_pad: the expert tables'
    size, EP8's by default; tail: token rows past block_m; groups: scale groups per stage;
    split_k: K slices; probs: fc2's router probs in the epilogue; maxnreg: a register cap;
    stage_acc: the prob epilogue's accumulator through shared memory)."""
    words = torch.empty(16 * 1536, 256, dtype=torch.int32)
    x = torch.empty(512, 2048, dtype=torch.bfloat16)
    w_desc = TensorDescriptor.from_tensor(
        words, [block_n, wg.STAGE_WORDS * groups],
        gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=32, rank=2))
    x_desc = wg.x_descriptor(x, block_m, groups)
    xt_desc = wg.x_descriptor(x, tail, groups) if tail else x_desc
    names = ["w_desc", "x_desc", "xt_desc", "x_ptr", "s_ptr", "y_ptr", "p_ptr", "counts_ptr",
             "partials_ptr", "counters_ptr", "num_experts", "N", "K", "stride_xm", "stride_se", "stride_sn", "stride_ym"]
    types = [mangle_type(w_desc), mangle_type(x_desc), mangle_type(xt_desc), "*bf16", "*i32",
             "*bf16", "*fp32", "*i32", "*fp32", "*i32"]
    types += ["i32"] * 7
    signature = dict(zip(names, types))
    acc, words, operand = wg._layouts(block_n, block_m)
    constexprs = {"acc_layout": acc, "tail_layout": wg._acc_layout(tail or block_m),
                  "word_layout": words, "split_layout": operand, "E_PAD": e_pad,
                  "STAGES": stages, "SWIGLU": bool(swiglu), "HAS_PROBS": bool(probs),
                  "PERSISTENT": bool(persistent), "X_ASYNC": bool(x_async), "TAIL": tail,
                  "RELEASE": bool(release), "EARLY_WORDS": bool(early_words),
                  "REFILL_FIRST": bool(refill_first), "SPLIT_K": split_k,
                  "STAGE_ACC": bool(stage_acc), "num_warps": 4}
    signature.update({name: "constexpr" for name in constexprs})
    aligned = {(names.index(name), ): [["tt.divisibility", 16]]
               for name in ("x_ptr", "s_ptr", "y_ptr", "p_ptr", "counts_ptr", "partials_ptr",
                            "counters_ptr")}  # as a launch
    kernel = triton.compile(
        GluonASTSource(fn=wg._w4a16_gluon_kernel, signature=signature, constexprs=constexprs,
                       attrs=aligned),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": 4, "launch_pdl": True, **({"maxnreg": maxnreg} if maxnreg else {})})
    ptx = kernel.asm["ptx"]
    body = ptx[ptx.index(".entry"):]
    wait = body.index("griddepcontrol.wait")  # reads before it: global loads, copies, x boxes
    before = {op: body.count(op, 0, wait) for op in ("ld.global", "cp.async.c",
                                                      "cp.async.bulk.tensor.3d")}
    words_before = body.count("cp.async.bulk.tensor.2d", 0, wait)  # the weight words' boxes
    code = sass(kernel.asm["cubin"])
    return {"sass_wgmma_waits": code.count("WARPGROUP.DEPBAR"),
            **sass_facts(code),
            **ptx_counts(ptx, "wgmma", "wgmma_register_a", "tma_loads", "prmt", "lop3",
                         "scale_copies", "copy_arrives", "global_loads", "atomics"),
            "pdl_waits": len(re.findall(r"griddepcontrol\.wait", ptx)),
            "pdl_releases": len(re.findall(r"griddepcontrol\.launch_dependents", ptx)),
            "wait_before_reads": words_before + sum(before.values()) == 0,
            "words_before_wait": words_before,
            "other_reads_before_wait": sum(before.values()),
            "barrier_invalidations": body.count("mbarrier.inval"),
            "release_after_loads": "griddepcontrol.launch_dependents" in body and (
                body.index("griddepcontrol.launch_dependents")
                > body.index("cp.async.bulk.tensor")),
            "prologue_barriers": body[:body.index("cp.async.bulk.tensor")].count("bar.sync"),
            "shared": kernel.metadata.shared}


@pytest.mark.parametrize("block_m,block_n,stages,persistent,swiglu,x_async",
                         [t + (0, 0) for t in COMPILED] + [(64, 64, 2, 0, 1, 0), (64, 64, 2, 1, 1, 0),
                                                           (8, 64, 3, 0, 0, 1), (8, 64, 4, 0, 1, 1),
                                                           (16, 128, 3, 1, 0, 1)])
def test_compiles_for_sm90(block_m, block_n, stages, persistent, swiglu, x_async):
    """Frontend, layouts and ptxas for sm_90a."""
    facts = facts_of_child(__file__, block_m, block_n, stages, persistent, swiglu, x_async)
    parts = 2 if swiglu else 1  # gate and up rows
    # per 64 weight rows, 8 wgmma (k = 16) per 128-input block, A from registers
    assert facts["wgmma"] == facts["wgmma_register_a"] == 8 * parts * (block_n // 64)
    # words (per part) and one box of the two x halves per stage (x_async: by cp.async, 8
    # bytes a thread): STAGES - 1 in the prologue, one refill (and a persistent program's
    # refill from the next tile)
    issues = stages + persistent
    x_copies = 2 * block_m * wg.HALF * 2 // (128 * 8) if x_async else 0
    assert facts["tma_loads"] == (parts + (0 if x_async else 1)) * issues
    # lane order: one AND-OR per A register (pair of inputs), no byte permute; the unpack is
    # one asm per register, not per element
    assert facts["lop3"] == parts * block_n // 2 and facts["prmt"] == 0
    # the scale words ride in the ring (cp.async, with each fill): no global load in flight
    # under a wgmma; the one left before the epilogue is the expert counts'
    assert facts["copy_arrives"] == issues
    assert facts["scale_copies"] == (parts + x_copies) * issues
    assert swiglu or facts["global_loads"] == 1
    assert facts["shared"] <= 227 * 1024
    # ptxas kept the wgmmas pipelined: one wait per half block in the loop and one after it.
    # (It retired each wgmma at once when a zero-trip path left the loop, round 11.)
    assert facts["sass_wgmma_waits"] == 3
    # launched with PDL: it waits for the previous kernel before its first read of global
    # memory, and lets the next one in only as its CTAs exit (round 15)
    assert facts["pdl_waits"] == 1 and facts["pdl_releases"] == 0
    assert facts["wait_before_reads"]
    assert facts["pending_accumulator_reads"] == []


#: fc2's builds beyond COMPILED's plain ones, as the rules launch them: (tiles, persistent,
#: x_async, tail, groups, release, early_words, refill_first, register cap, stage_acc)
FC2_BUILDS = [((32, 128, 3), 0, 1, 0, 1, 0, 0, 0, 0, 0), ((32, 128, 3), 0, 1, 0, 1, 0, 0, 0, 128, 0),
              ((16, 128, 3), 0, 0, 0, 1, 0, 0, 0, 128, 0), ((16, 128, 2), 0, 0, 0, 1, 0, 0, 0, 96, 0),
              ((16, 128, 3), 1, 1, 0, 1, 0, 0, 0, 0, 0), ((8, 64, 3), 0, 1, 0, 2, 0, 0, 0, 0, 0),
              ((16, 64, 2), 0, 0, 0, 4, 1, 1, 1, 0, 0), ((32, 64, 2), 0, 0, 16, 2, 1, 1, 0, 0, 0),
              # the accumulator staged in shared memory (gluon_stage_acc): W2 at EP8, its walk
              # over a padded exchange's capped grid, and a tail
              ((64, 128, 2), 0, 0, 0, 1, 0, 0, 0, 0, 1), ((64, 128, 2), 1, 0, 0, 1, 0, 0, 0, 0, 1),
              ((64, 128, 2), 0, 0, 16, 1, 0, 0, 0, 0, 1)]


@pytest.mark.parametrize("build", [(t[:3], t[3], 0, tail, 1, 0, 0, 0, 0, 0)
                                   for t in COMPILED for tail in (0, 16)] + FC2_BUILDS)
def test_fc2_epilogue_reads_the_accumulator_after_its_wait(build):
    """With the router probs in the epilogue (fc2), no instruction touches a wgmma's
    accumulator before the wait that retires it. ptxas moved the first bf16 packs of the
    accumulator above the last wait in builds of an epilogue that rounded it before the prob
    (Marlin's order, session 70): on the H200 the persistent ones stored partial sums, 6-15%
    off on the E128 experts block."""
    tiles, persistent, x_async, tail, groups, release, early, refill, maxnreg, staged = build
    facts = facts_of_child(__file__, *tiles, persistent, 0, x_async, table_size(16), tail,
                           groups, release, early, refill, 1, 1, maxnreg, staged)
    assert facts["sass_wgmmas"] > 0 and facts["pending_accumulator_reads"] == []


@pytest.mark.parametrize("block_m,block_n,stages,persistent,swiglu",
                         [(64, 64, 2, 0, 0), (64, 64, 2, 1, 0), (32, 64, 3, 0, 1)])
def test_tail_compiles_for_sm90(block_m, block_n, stages, persistent, swiglu):
    """With a tail, tiles without one take a loop with the plain kernel's wgmmas and loads, and
    tiles with one a loop that also multiplies the tail rows: both keep their wgmmas
    pipelined."""
    facts = facts_of_child(__file__, block_m, block_n, stages, persistent, swiglu, 0, 16, 16)
    parts = 2 if swiglu else 1
    tile = 8 * parts * (block_n // 64)  # wgmmas of a block
    assert facts["wgmma"] == facts["wgmma_register_a"] == 3 * tile
    assert facts["lop3"] == 2 * parts * block_n // 2  # one unpack per loop
    # TMA: words and x, plus the tail's x in the prologue (where the tile has it), in the tail
    # loop's refills and in a persistent program's look-ahead to the next tile (either loop);
    # none in the plain loop's own refills
    plain, tail = parts + 1, parts + 2
    assert facts["tma_loads"] == (stages - 1) * tail + plain + tail + 2 * persistent * tail
    # one wait per half block in each loop, one after the plain loop, two after the tail's
    assert facts["sass_wgmma_waits"] == 7
    assert facts["pending_accumulator_reads"] == []
    assert facts["shared"] <= 227 * 1024


@pytest.mark.parametrize("block_m,block_n,stages,groups,x_async,swiglu",
                         [(64, 64, 3, 1, 0, 0), (32, 64, 3, 2, 0, 0), (8, 64, 3, 2, 1, 0),
                          (8, 64, 2, 4, 0, 1), (32, 64, 3, 2, 0, 1)])
def test_split_k_compiles_for_sm90(block_m, block_n, stages, groups, x_async, swiglu):
    """Slices of K (dense calls, gluon_dense_tiles; the fused fc1 at few rows,
    gluon_split_k): the same pipelined K loop and loads as the whole-K kernel, plus the slice
    sum's two atomics (the arrival, the reset), one for the gate and the up sums together."""
    whole, split = (facts_of_child(__file__, block_m, block_n, stages, 0, swiglu, x_async, 1, 0, groups,
                                    0, 0, 0, s) for s in (1, 4))
    for fact in ("sass_wgmma_waits", "wgmma", "wgmma_register_a", "tma_loads", "scale_copies",
                 "pdl_waits", "wait_before_reads"):
        assert split[fact] == whole[fact], fact
    assert whole["atomics"] == 0 and split["atomics"] == 2
    assert split["shared"] <= 227 * 1024


def test_tail_on_tiles_of_two_groups_compiles_for_sm90():
    """The rule's tiles at EP8 from 13 to 24 rows per expert (round 20): 32 tokens, two groups
    in two stages, a tail of 16, release and early words. Both loops keep their wgmmas
    pipelined and release the next kernel once; the shared memory leaves room for 3 programs
    an SM (each takes 1 KB more), or a skewed routing's extra row tile spills past the wave."""
    facts = facts_of_child(__file__, 32, 64, 2, 0, 0, 0, 16, 16, 2, 1, 1)
    assert facts["wgmma"] == facts["wgmma_register_a"] == 16 + 2 * 16
    assert facts["sass_wgmma_waits"] == (4 + 1) + (4 + 2)
    assert facts["pdl_releases"] == 2 and facts["release_after_loads"]
    assert facts["words_before_wait"] == 1 and facts["other_reads_before_wait"] == 0
    assert facts["barrier_invalidations"] == 2 + 1
    assert 3 * (facts["shared"] + 1024) <= 228 * 1024


@pytest.mark.parametrize("tiles,tail,groups", [((16, 64, 2), 0, 4), ((32, 64, 2), 16, 2)])
def test_refill_first_compiles_for_sm90(tiles, tail, groups):
    """Refilling the previous step's stage before the wait (round 20, the rule's tiles at EP8
    up to 8 and from 13 tokens per expert, released, with early words) keeps every wgmma of
    the loops pipelined and issues the same loads: it moves the refill, nothing else."""
    plain, first = (facts_of_child(__file__, *tiles, 0, 0, 0, 16, tail, groups, 1, 1, r) for r in (0, 1))
    for fact in ("sass_wgmma_waits", "wgmma", "wgmma_register_a", "tma_loads", "pdl_releases",
                 "words_before_wait", "barrier_invalidations", "shared"):
        assert first[fact] == plain[fact], fact
    assert first["release_after_loads"] and first["wait_before_reads"] == plain["wait_before_reads"]


@pytest.mark.parametrize("block_m,block_n,stages,persistent,swiglu,x_async",
                         [(8, 64, 3, 1, 0, 0), (8, 64, 3, 0, 0, 1), (8, 64, 3, 0, 1, 1),
                          (32, 64, 3, 0, 1, 0)])
def test_two_groups_a_stage_compile_for_sm90(block_m, block_n, stages, persistent, swiglu,
                                             x_async):
    """Two scale groups a stage: one words box and one x box (four halves) per refill, one
    scale word, both groups' wgmmas pipelined within the stage (its last half is retired in
    it: left in flight across the loop's back edge, ptxas serialized them all)."""
    facts = facts_of_child(__file__, block_m, block_n, stages, persistent, swiglu, x_async, 16, 0, 2)
    parts = 2 if swiglu else 1
    assert facts["wgmma"] == facts["wgmma_register_a"] == 2 * 8 * parts * (block_n // 64)
    issues = stages + persistent
    x_copies = 4 * block_m * wg.HALF * 2 // (128 * 8) if x_async else 0
    assert facts["tma_loads"] == (parts + (0 if x_async else 1)) * issues
    assert facts["scale_copies"] == (parts + x_copies) * issues
    assert facts["lop3"] == 2 * parts * block_n // 2
    # one wait per half block of each group, one after the loop
    assert facts["sass_wgmma_waits"] == 5
    assert facts["shared"] <= 227 * 1024


@pytest.mark.parametrize("block_m,block_n,stages,swiglu,groups",
                         [(16, 64, 2, 0, 4), (16, 128, 3, 0, 2), (8, 64, 2, 1, 4)])
def test_release_compiles_for_sm90(block_m, block_n, stages, swiglu, groups):
    """With release, each program lets the next kernel in once, after its first loads are
    issued (once its last one is, gluon_release), and still waits for the previous kernel
    before its first read. With early words it asks for its guessed tile's first words (the
    2-D boxes, gate and up) before that wait, and for nothing else; its barriers are
    invalidated at the end, so no layout scratch takes their memory (round 19)."""
    facts = facts_of_child(__file__, block_m, block_n, stages, 0, swiglu, 0, 16, 0, groups, 1)
    assert facts["pdl_releases"] == 1 and facts["release_after_loads"]
    if not swiglu:  # TP2's persistent grid (round 22): once, at the last tile's last load
        walk = facts_of_child(__file__, block_m, block_n, stages, 1, 0, 0, 128, 0, groups, 1)
        assert walk["pdl_releases"] == 1 and walk["release_after_loads"]
        assert walk["pdl_waits"] == 1 and walk["wait_before_reads"]
    assert facts["pdl_waits"] == 1 and facts["wait_before_reads"]
    assert facts["barrier_invalidations"] == stages
    early = facts_of_child(__file__, block_m, block_n, stages, 0, swiglu, 0, 16, 0, groups, 1, 1)
    parts = 2 if swiglu else 1
    assert early["words_before_wait"] == parts * (stages - 1)
    assert early["other_reads_before_wait"] == 0
    assert early["barrier_invalidations"] == stages + 1
    assert early["sass_wgmma_waits"] == facts["sass_wgmma_waits"]


def test_expert_tables_stay_within_a_warp():
    """Every warp holds all the tables' entries, so at 128 experts the scans and lookups before
    the first load cost no more CTA barriers than EP8's tables of 32 (one entry per thread
    spread 128 over the 4 warps: 18 barriers against 6, round 15)."""
    facts = [facts_of_child(__file__, 8, 128, 3, 1, 0, 0, e_pad) for e_pad in (table_size(16), 128)]
    assert facts[0]["prologue_barriers"] == facts[1]["prologue_barriers"]


def test_tables_fill_a_warp():
    """Fewer entries than lanes repeat across the warp, and Triton 3.6's ptxas then keeps the
    loops' descriptors in ordinary registers (an R2UR before each wgmma, round 51); a dense
    call's single entry does not (its table stays one entry)."""
    assert [table_size(e) for e in (1, 2, 8, 16, 32, 33, 128)] == [1, 32, 32, 32, 32, 64, 128]


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("tiles", TILES)
@pytest.mark.parametrize("e,n,k,counts", [
    (6, 256, 512, [0, 37, 0, 130, 1, 64]),  # empty experts, partial and several row tiles
    (3, 192, 256, [5, 70, 0]),  # N not a multiple of 128, K of one scale word (two groups)
    (2, 2048, 768, [33, 96]),  # W2's K: six blocks
])
def test_matches_reference(tiles, e, n, k, counts, assert_gemm_close):
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(e, n, k, device="cuda"))
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), k, device="cuda").bfloat16()
    assert wg.applies(x, qweight)
    assert_gemm_close(wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles),
                      scheme.reference_grouped_matmul(x, qweight, tokens))


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
def test_calls_keep_no_weight_or_activation_alive():
    """A TMA descriptor holds its tensor: the weight's descriptors live with its lane codes
    and die with them, and no call keeps its activations (the module-level cache that did
    kept 0.9 GiB a step alive in RL)."""
    torch.manual_seed(0)
    tokens = torch.tensor([37, 0, 130, 64], device="cuda", dtype=torch.int32)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    for _ in range(3):  # a new weight every optimizer step, new activations every call
        qweight = get_scheme("w4a16").quantize_weight(torch.randn(4, 256, 512, device="cuda"))
        for _ in range(2):
            x = torch.randn(231, 512, device="cuda").bfloat16()
            wg.w4a16_grouped_gluon(x, qweight, tokens, 64, 128, 3)
        assert len(qweight.lane_codes[2]) == 1  # one box, described once
        del qweight, x
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("tiles,swiglu", [((8, 64, 3, None, None), False),
                                          ((8, 128, 3, None, 3), False),
                                          ((64, 64, 3, None, None), False),
                                          ((8, 64, 4, None, None), True),
                                          ((16, 64, 3, None, 2), True)])
@pytest.mark.parametrize("counts", [[0, 37, 0, 130, 1, 64], [1, 0, 0, 2, 0, 5], [0, 0, 1, 0, 0, 0]])
def test_x_async_is_the_tma_bits(tiles, swiglu, counts):
    """x by cp.async of the tiles' own rows (zero-filling the rest) gives the TMA boxes' bits:
    a padding token's column is its own and is never stored."""
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(6, 384, 512, device="cuda"))
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), 512, device="cuda").bfloat16()
    got, want = (wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, swiglu=swiglu, x_async=a)
                 for a in (True, False))
    assert torch.equal(got, want)


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("tiles,swiglu", [((16, 128, 3, None, None), False),
                                          ((32, 64, 3, None, None), True)])
def test_capped_grid_is_the_full_grids_bits(tiles, swiglu):
    """max_programs below the grid's bound: programs walk on over the tiles (here more tiles
    than programs) and give the one-tile-a-program grid's bits."""
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(6, 384, 768, device="cuda"))
    counts = [0, 37, 0, 130, 1, 64]
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(4 * sum(counts), 768, device="cuda").bfloat16()  # padded past the counts
    probs = None if swiglu else torch.rand(x.shape[0], device="cuda")  # fc2's epilogue
    got, want = (wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, swiglu=swiglu, probs=probs,
                                        max_programs=cap) for cap in (5, None))
    rows = sum(counts)
    assert torch.equal(got[:rows], want[:rows])


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("tiles,tail,swiglu", [((64, 64, 2, None, None), 16, False),
                                               ((64, 64, 2, None, 3), 16, False),
                                               ((128, 64, 2, None, None), 32, False),
                                               ((32, 64, 3, 160, None), 16, True),
                                               ((32, 64, 3, None, 2), 16, True)])
def test_tail_is_the_plain_tiles_bits(tiles, tail, swiglu, assert_gemm_close):
    """An expert's last row tile taking up to `tail` more rows (a narrow wgmma on the same A
    registers) gives the bits of the same tiles without: experts empty, under the token tile,
    in its tail, past it by one row, over several tiles."""
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(12, 384, 512, device="cuda"))
    counts = [0, 37, 0, 130, 1, 64, 80, 81, 150, 16, 65, 161]
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), 512, device="cuda").bfloat16()
    probs = None if swiglu else torch.rand(sum(counts), device="cuda")  # fc2's epilogue
    got, want = (wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, swiglu=swiglu, probs=probs,
                                        tail=t) for t in (tail, 0))
    assert torch.equal(got, want)
    if not swiglu:  # the prob times the rounded output (Marlin's order), a bf16 product
        plain = wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, tail=tail)
        assert torch.equal(got, plain * probs[:, None].bfloat16())
        assert_gemm_close(plain, scheme.reference_grouped_matmul(x, qweight, tokens))
    with pytest.raises(ValueError, match="tail=12"):
        wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, tail=12)


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("tiles,launch", [((64, 128, 2, None, None), {}),
                                          ((64, 128, 2, None, None), {"tail": 16}),
                                          ((64, 128, 2, None, None), {"max_programs": 20}),
                                          ((64, 128, 2, None, 1), {}),
                                          ((32, 128, 3, None, None), {"x_async": True})])
def test_staged_prob_epilogue_is_the_register_bits(tiles, launch):
    """fc2's accumulator moved to the store layout before the prob (stage_acc) gives the
    register epilogue's bits: the rounded output times the bf16 prob (Marlin's order), on
    experts empty, within a tile, over several, in a tail, in walked and persistent grids."""
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(12, 256, 512, device="cuda"))
    counts = [0, 37, 0, 130, 1, 64, 80, 81, 150, 16, 65, 128]
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), 512, device="cuda").bfloat16()
    probs = torch.rand(sum(counts), device="cuda")
    staged, plain_probs, plain = (
        wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, probs=p, stage_acc=st, **launch)
        for p, st in ((probs, True), (probs, False), (None, False)))
    assert torch.equal(staged, plain_probs)
    assert torch.equal(staged, plain * probs[:, None].bfloat16())


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("tiles,swiglu,x_async,tail", [((8, 64, 3, None, 3), False, False, 0),
                                                       ((8, 64, 3, None, None), False, True, 0),
                                                       ((8, 64, 3, None, None), True, True, 0),
                                                       ((32, 64, 3, None, None), True, False, 0),
                                                       ((64, 64, 2, None, 3), False, False, 16),
                                                       ((32, 64, 2, None, None), False, False, 16),
                                                       ((16, 128, 2, 96, None), False, False, 0)])
@pytest.mark.parametrize("groups,k", [(2, 512), (2, 768), (4, 512), (4, 1024)])
def test_stages_of_several_groups_are_the_one_group_bits(tiles, swiglu, x_async, tail, groups,
                                                         k):
    """A ring of stages of two or four scale groups gives the bits of stages of one: ragged
    experts, persistent grids, cp.async x, tails, the fused SwiGLU, K of one stage or of an
    odd count of group pairs."""
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(12, 384, k, device="cuda"))
    counts = [0, 37, 0, 130, 1, 64, 80, 81, 3, 16, 65, 5]
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), k, device="cuda").bfloat16()
    probs = None if swiglu else torch.rand(sum(counts), device="cuda")  # fc2's epilogue
    got, want = (wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, swiglu=swiglu, probs=probs,
                                        x_async=x_async, tail=tail, groups=g) for g in (groups, 1))
    assert torch.equal(got, want)
    if not tiles[4]:  # refilling before the wait (round 20): the same bits
        assert torch.equal(wg.w4a16_grouped_gluon(
            x, qweight, tokens, *tiles, swiglu=swiglu, probs=probs, x_async=x_async, tail=tail,
            groups=groups, refill_first=True), want)
    with pytest.raises(ValueError, match="refill_first"):
        wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles[:4], 3, groups=groups,
                               refill_first=True)
    with pytest.raises(ValueError, match="groups=3"):
        wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, groups=3)
    if k % (4 * 128):
        with pytest.raises(ValueError, match="groups=4"):  # no whole stages of four groups
            wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, groups=4)


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("overlap", [False, True])
def test_pdl_chain_in_a_graph_is_the_stream_ordered_bits(overlap):
    """Decode's chain in one CUDA graph, each kernel launched with PDL: the counts and x of
    each call are written by the kernel just before it (fc1's output is W2's x), so a read
    ahead of griddepcontrol.wait could see the previous replay's values. overlap: each call
    releases the next early, and the fc1 calls ask for their words before the wait."""
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    w13 = scheme.quantize_weight(torch.randn(16, 2 * 512, 1024, device="cuda"))
    w2 = scheme.quantize_weight(torch.randn(16, 1024, 512, device="cuda"))
    counts = [torch.randint(0, 9, (16, ), device="cuda", dtype=torch.int32) for _ in range(2)]
    tokens = torch.zeros(16, device="cuda", dtype=torch.int32)
    rows = max(int(c.sum()) for c in counts)
    x_in = [torch.randn(rows, 1024, device="cuda").bfloat16() for _ in range(2)]
    x = torch.empty_like(x_in[0])

    def chain(pdl):  # fc1 + SwiGLU, W2 (persistent), fc1 again on W2's output
        ahead = dict(release=pdl and overlap, early_words=pdl and overlap)
        h = wg.w4a16_grouped_gluon(x, w13, tokens, 8, 64, 4, swiglu=True, pdl=pdl, **ahead)
        h = wg.w4a16_grouped_gluon(h, w2, tokens, 8, 128, 3, None, 3, pdl=pdl,
                                   release=pdl and overlap)
        return wg.w4a16_grouped_gluon(h, w13, tokens, 8, 64, 4, swiglu=True, pdl=pdl, **ahead)

    want = []
    for i in range(2):
        tokens.copy_(counts[i])
        x.copy_(x_in[i])
        want.append(chain(pdl=False)[:int(counts[i].sum())].clone())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = chain(pdl=True)
    for i in (0, 1, 0):
        tokens.copy_(counts[i])
        x.copy_(x_in[i])
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(got[:int(counts[i].sum())], want[i])


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("tiles,groups", [((16, 64, 2, None, None), 4),
                                          ((32, 64, 3, None, None), 2)])
def test_early_words_are_the_plain_bits_call_after_call(tiles, groups):
    """Early words over 40 back-to-back calls, guesses right (one row tile an expert) and
    wrong (experts of two, and empty ones): the plain launch's bits every time. Before the
    barriers were invalidated at the end, the epilogue's layout scratch took the early
    barrier's memory and 8 bytes of an output row came out wrong in up to 33 of 40 calls
    (round 19, early_diag.txt)."""
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(16, 1536, 2048, device="cuda"))
    for counts in ([7, 7, 15, 2, 12, 10, 12, 3, 9, 11, 4, 2, 4, 7, 2, 4],
                   [0, 40, 3, 0, 17, 9, 1, 33, 0, 5, 5, 5, 64, 2, 0, 8]):
        tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
        x = torch.randn(sum(counts), 2048, device="cuda").bfloat16()
        want = wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, groups=groups, pdl=True)
        for i in range(40):
            got = wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles, groups=groups, pdl=True,
                                         release=bool(i % 2), early_words=True)
            assert torch.equal(got, want), (counts, i)


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
def test_odd_group_counts_take_the_triton_kernel(assert_gemm_close):
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(4, 256, 384, device="cuda"))  # 3 groups
    tokens = torch.tensor([40, 0, 33, 70], device="cuda", dtype=torch.int32)
    x = torch.randn(143, 384, device="cuda").bfloat16()
    assert not wg.applies(x, qweight)
    assert_gemm_close(w4a16_grouped_matmul(x, qweight, tokens),
                      scheme.reference_grouped_matmul(x, qweight, tokens))


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("counts", [[0, 37, 0, 130, 1, 64], [200, 0, 3, 0, 0, 40]])
@pytest.mark.parametrize("fused_tiles", [(64, 64, 2, None), (16, 64, 3, 96), (32, 64, 3, None, 1),
                                         (8, 64, 4, None)])
def test_fused_swiglu_is_the_unfused_bits(counts, fused_tiles):
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(6, 2 * 192, 512, device="cuda"))
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), 512, device="cuda").bfloat16()
    want = reference_gated_activation(wg.w4a16_grouped_gluon(x, qweight, tokens, 64, 128, 3))
    got = wg.w4a16_grouped_gluon(x, qweight, tokens, *fused_tiles, swiglu=True)
    assert torch.equal(got, want)


def test_fused_swiglu_refuses_router_probs():
    """The probs scale fc2's output: a fused fc1 given them names the argument (checked before
    any launch, so on CPU too)."""
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(2, 2 * 64, 128))
    tokens = torch.tensor([3, 1], dtype=torch.int32)
    with pytest.raises(ValueError, match="probs: the router probs scale fc2's output"):
        wg.w4a16_grouped_gluon(torch.randn(4, 128).bfloat16(), qweight, tokens, 16, 64, 2,
                               swiglu=True, probs=torch.ones(4))


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("split", [2, 4])
@pytest.mark.parametrize("counts", [[0, 3, 0, 1, 1, 0], [0, 0, 9, 0, 0, 40]])
@pytest.mark.parametrize("fused_tiles,groups", [((8, 64, 2, None), 2), ((32, 64, 3, None), 1)])
def test_split_fused_swiglu_matches_and_repeats(split, counts, fused_tiles, groups):
    """K split in the fused fc1: the gate's and the up's slices are each summed before the
    SwiGLU, so the output is the unsplit call's up to fp32 summation order, and a split call
    repeats its bits (slices added in slice order)."""
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(6, 2 * 192, 1024, device="cuda"))
    tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
    x = torch.randn(sum(counts), 1024, device="cuda").bfloat16()
    whole = wg.w4a16_grouped_gluon(x, qweight, tokens, *fused_tiles, swiglu=True, groups=groups)
    got = [wg.w4a16_grouped_gluon(x, qweight, tokens, *fused_tiles, swiglu=True, groups=groups,
                                  split_k=split) for _ in range(3)]
    _assert_swiglu_close(got[0], whole)
    assert torch.equal(got[0], got[1]) and torch.equal(got[0], got[2])


def _assert_swiglu_close(got, want):
    """Sums in another order move gate and up by an fp32 ulp, which can flip each of the
    SwiGLU's five bf16 roundings (silu's slope amplifies the gate's near its minimum): a few
    bf16 ulps on some elements, so a bound on the whole's relative error, at 2**-8."""
    assert (got.float() - want.float()).norm() <= 2**-8 * want.float().norm()


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("fused", [False, True])
def test_decode_graphs_split_few_rows(fused, monkeypatch, assert_gemm_close):
    """A decode graph of 8 rows on 16 experts at K = 2048 (EP8's decode batch at M = 8) takes the
    Gluon kernel, the fused fc1 with K in four slices (gluon_split_k), after an eager call on
    a device no split has run on: the eager call, which takes the Triton kernel, makes the
    counters."""
    from qarl_kernels import split_k, w4a16_gemm
    monkeypatch.setattr(split_k, "_rings", {})
    calls = []
    monkeypatch.setattr(w4a16_gemm, "w4a16_grouped_gluon",
                        lambda *a, **kw: calls.append(kw["split_k"]) or
                        wg.w4a16_grouped_gluon(*a, **kw))
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(16, 384, 2048, device="cuda"))
    tokens = torch.tensor([0, 3, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 1, 0], device="cuda",
                          dtype=torch.int32)
    x = torch.randn(8, 2048, device="cuda").bfloat16()
    probs = torch.rand(8, device="cuda")
    op = ((lambda: w4a16_gemm.w4a16_grouped_swiglu(x, qweight, tokens)) if fused
          else (lambda: w4a16_grouped_matmul(x, qweight, tokens, probs=probs)))
    eager = op()
    assert calls == [] and x.device in split_k._rings
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = op()
    graph.replay()
    assert calls == [4 if fused else 1]
    (_assert_swiglu_close if fused else assert_gemm_close)(got, eager)


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
def test_graphs_take_it_after_an_eager_call():
    """Decode's case: a graph captured after an eager warm-up takes the Gluon kernel (the eager
    call made the lane-order codes); one captured cold takes the Triton kernel, and says so,
    instead of recording the reorder into every replay."""
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(16, 256, 2048, device="cuda"))
    tokens = torch.full((16, ), 40, device="cuda", dtype=torch.int32)
    x = torch.randn(640, 2048, device="cuda").bfloat16()
    tiles = gluon_tiles(640, 16, 256, 2048)
    assert tiles is not None and gluon_tiles(640, 16, 256, 2048, capturing=False) is None
    cold = torch.cuda.CUDAGraph()
    with pytest.warns(UserWarning, match="Run one eager step before capturing"):
        with torch.cuda.graph(cold):
            got_cold = w4a16_grouped_matmul(x, qweight, tokens)
    assert not has_lane_codes(qweight)
    eager = w4a16_grouped_matmul(x, qweight, tokens)  # the Triton kernel; makes the codes
    assert has_lane_codes(qweight)
    warm = torch.cuda.CUDAGraph()
    with torch.cuda.graph(warm):
        got_warm = w4a16_grouped_matmul(x, qweight, tokens)
    cold.replay()
    warm.replay()
    torch.cuda.synchronize()
    assert torch.equal(got_cold, eager)
    assert torch.equal(got_warm, wg.w4a16_grouped_gluon(x, qweight, tokens, *tiles))


if __name__ == "__main__":
    serve_facts(_compile_for_sm90)
