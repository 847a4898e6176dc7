"""The GPU mutation review of the Gluon (Hopper-only) kernels: single semantic changes that give
wrong numbers or stores out of bounds, each with the smallest set of GPU tests that should catch
it (exact pytest node ids: on CPU they skip, on an H100 they run). run_mutants.py applies each
to a copy of kernels/ (imported as qarl_kernels) and runs its tests.

Fields: id; file (relative to kernels/); old (a snippet occurring exactly once in that file);
new (its replacement); what (the change, and what a correct test sees); tests (node ids);
compile (the sm_90a builds the CPU pre-check makes of the mutant: the covering test module's
_compile_for_sm90 and its keyword arguments; the pre-check also asks that some build's PTX
differ from the unmutated kernel's)."""

T = "tests/kernels/"
GLUON = T + "test_w4a16_gluon.py::"
DENSE = T + "test_w4a16_gluon_dense.py::"
PROB = T + "test_router_prob_epilogue.py::"
WS = T + "test_w4a16_grouped_ws.py::"
FP8 = T + "test_fp8_grouped_ws.py::"
TABLES = T + "test_expert_tiles.py::"

# the tests, named once: each mutant takes one or two of them
REF_16x64 = GLUON + "test_matches_reference[6-256-512-counts0-tiles0]"  # 16x64x3, K of 4 groups
FUSED = GLUON + "test_fused_swiglu_is_the_unfused_bits[fused_tiles0-counts0]"  # 64x64x2 SwiGLU
TAIL = GLUON + "test_tail_is_the_plain_tiles_bits[tiles0-16-False]"  # 64x64x2, tail 16, probs
X_ASYNC = GLUON + "test_x_async_is_the_tma_bits[counts0-tiles0-False]"  # 8x64x3, K of 4 groups
CAPPED = GLUON + "test_capped_grid_is_the_full_grids_bits[tiles0-False]"  # walked grid, K of 6
SPLIT = DENSE + "test_split_matches_reference_and_repeats[320-1024-2-5]"  # 2 slices of 4 steps
PROB_GLUON = PROB + "test_hopper_w4a16_kernels_take_marlins_order[w4a16 gluon]"
PROB_WS = PROB + "test_hopper_w4a16_kernels_take_marlins_order[w4a16 ws]"
PROB_FP8 = PROB + "test_hopper_fp8_kernel_scales_each_row"
WS_FWD = WS + "test_matches_reference[False-8-256-512-counts0-rings0]"  # 257, 256, 600 rows
WS_GRAD = WS + "test_matches_reference[True-8-256-512-counts6-rings0]"  # 2 row blocks, 4 groups
FP8_256 = FP8 + "test_matches_triton_kernel_bit_for_bit[8-256-384-counts0-tiles0]"  # 256 wide, 3 K
GLUON_TABLES = TABLES + "test_gluon_tables_end_at_x_rows"  # all five cases, one small kernel


def _g(**kw):
    return {"module": "test_w4a16_gluon", "kwargs": kw}


def _ws(**kw):
    return {"module": "test_w4a16_grouped_ws", "kwargs": kw}


def _fp8(**kw):
    return {"module": "test_fp8_grouped_ws", "kwargs": kw}


PLAIN = _g(block_m=16, block_n=64, stages=3, persistent=0, swiglu=0)
FUSED_BUILD = _g(block_m=64, block_n=64, stages=2, persistent=0, swiglu=1)
WS_FWD_BUILD = _ws(x_stages=2, w_stages=2, b_stages=2, grad_input=0, has_probs=0)
WS_GRAD_BUILD = _ws(x_stages=2, w_stages=2, b_stages=2, grad_input=1, has_probs=0)
FP8_BUILD = _fp8(block_n=256, stages=3, has_probs=0)

MUTANTS = [
    # ---- w4a16_gluon.py: the decode kernel ----
    dict(id="G1", file="w4a16_gluon.py",
         old="mov.b32 c, 0x43084308;", new="mov.b32 c, 0x43004300;",
         what="int4 unpack subtracts 128, not 136: every weight is (n - 0) * s, not (n - 8) * s "
              "(the WS kernel shares this asm): far off the reference",
         tests=[REF_16x64], compile=[PLAIN]),
    dict(id="G2", file="w4a16_gluon.py",
         old="shift = gl.arange(0, 4, pair_layout) * 4",
         new="shift = (3 - gl.arange(0, 4, pair_layout)) * 4",
         what="lane order: pair j of a word read from nibble 3 - j (inputs permuted within each "
              "8-input run): wrong sums",
         tests=[REF_16x64], compile=[PLAIN]),
    dict(id="G3", file="w4a16_gluon.py",
         old="scale2 = _scale_pairs(s_bufs.index(pair), (kb0 + kb) * GROUPS + g, row_layout)",
         new="scale2 = _scale_pairs(s_bufs.index(pair), (kb0 + kb) * GROUPS + g + 1, row_layout)",
         what="scale group index off by one: each group takes the other half of its scale word "
              "(its pair's scale): wrong sums",
         tests=[REF_16x64], compile=[PLAIN]),
    dict(id="G4", file="w4a16_gluon.py",
         old="acc = numerics.swiglu(acc, acc_up, False)",
         new="acc = numerics.swiglu(acc_up, acc, False)",
         what="fused SwiGLU with gate and up swapped (silu(up) * gate): fused != unfused bits",
         tests=[FUSED], compile=[FUSED_BUILD]),
    dict(id="G5", file="w4a16_gluon.py",
         old="tma_load(w_desc, [w_row + N, col], bar, w_bufs.index(parts * stage + 1))",
         new="tma_load(w_desc, [w_row, col], bar, w_bufs.index(parts * stage + 1))",
         what="fused fc1's up words are the gate rows (offset N dropped): silu(g) * g, fused != "
              "unfused bits",
         tests=[FUSED], compile=[FUSED_BUILD]),
    dict(id="G6", file="w4a16_gluon.py",
         old="w_row = expert * (parts * N) + n0",
         new="w_row = expert * (parts * N)",
         what="weight rows drop the tile's first column n0: every column block multiplies block "
              "0's rows (N = 256 over 64-row tiles): wrong columns",
         tests=[REF_16x64], compile=[PLAIN]),
    dict(id="G7", file="w4a16_gluon.py",
         old="k0 = kb * (GROUPS * BLOCK_K)",
         new="k0 = kb * (GROUPS * HALF_K)",
         what="x's K offset advances 64, not 128 inputs a step: steps after the first multiply "
              "the wrong x columns",
         tests=[REF_16x64], compile=[PLAIN]),
    dict(id="G8", file="w4a16_gluon.py",
         old="kb0 = split * steps",
         new="kb0 = split",
         what="split-K slice s starts at step s, not s * steps: slices overlap and miss K's end "
              "(dense, 2 slices of 4 steps): wrong sums",
         tests=[SPLIT], compile=[_g(block_m=16, block_n=64, stages=3, persistent=0, swiglu=0,
                                    split_k=2)]),
    dict(id="G9", file="w4a16_gluon.py",
         old="acc = numerics.scaled(acc, gl.expand_dims(prob, 0), True, False)",
         new="acc = acc",
         what="fc2's router prob never applied in the epilogue: the plain output where "
              "prob * output is wanted",
         tests=[PROB_GLUON], compile=[_g(block_m=16, block_n=64, stages=3, persistent=0,
                                         swiglu=0, probs=1)]),
    dict(id="G10", file="w4a16_gluon.py",
         old="_epilogue(acc_t, acc_t_up, row_start + BLOCK_M, row_end,",
         new="_epilogue(acc_t, acc_t_up, row_start + BLOCK_M - 1, row_end,",
         what="the tail's rows stored one row early (tile row BLOCK_M - 1 and on): tail != "
              "plain tiles' bits",
         tests=[TAIL], compile=[_g(block_m=64, block_n=64, stages=2, persistent=0, swiglu=0,
                                   tail=16, probs=1)]),
    dict(id="G11", file="w4a16_gluon.py",
         old="x_cols = k0 + gl.arange(0, HALF_K, layout=gl.SliceLayout(0, x_layout))",
         new="x_cols = gl.arange(0, HALF_K, layout=gl.SliceLayout(0, x_layout))",
         what="x by cp.async always reads K block 0's columns: x_async != TMA bits (K of 4 "
              "groups)",
         tests=[X_ASYNC], compile=[_g(block_m=8, block_n=64, stages=3, persistent=0, swiglu=0,
                                      x_async=1)]),
    dict(id="G12", file="w4a16_gluon.py",
         old="_issue(descs, ring, (j + STAGES - 1) % STAGES, ahead - steps, next_expert,",
         new="_issue(descs, ring, (j + STAGES - 1) % STAGES, ahead - steps + 1, next_expert,",
         what="a walking program prefetches the next tile's first stages one K step ahead: "
              "the capped (walked) grid != the full grid's bits",
         tests=[CAPPED], compile=[_g(block_m=16, block_n=128, stages=3, persistent=1,
                                     swiglu=0, probs=1)]),
    # ---- split_k.py: the Gluon kernels' slice sum ----
    dict(id="G13", file="split_k.py",
         old='total = gl.load(base + index, cache_modifier=".cg")\n'
             '        for s in gl.static_range(1, SPLIT_K):',
         new='total = gl.load(base + index, cache_modifier=".cg")\n'
             '        for s in gl.static_range(2, SPLIT_K):',
         what="gluon_split_sum drops slice 1's partial (2 slices: only slice 0's sum stored): "
              "wrong sums",
         tests=[SPLIT], compile=[_g(block_m=16, block_n=64, stages=3, persistent=0, swiglu=0,
                                    split_k=2)]),
    # ---- gluon_hopper.py: the expert tables of all three kernels ----
    dict(id="H1", file="gluon_hopper.py",
         old="tables[1].store(gl.associative_scan(counts, 0, _add) - counts)",
         new="tables[1].store(gl.associative_scan(counts, 0, _add))",
         what="experts' first rows an inclusive prefix sum (each expert starts at its own end): "
              "tiles own the wrong rows",
         tests=[GLUON_TABLES], compile=[PLAIN, FP8_BUILD]),
    dict(id="H2", file="gluon_hopper.py",
         old="row_end = gl.minimum(row_end, tables[3])",
         new="row_end = row_end",
         what="tiles no longer end at x's rows where the counts sum past them: row ends past x "
              "(stores out of bounds)",
         tests=[GLUON_TABLES], compile=[PLAIN, FP8_BUILD]),
    # ---- w4a16_grouped_ws.py: the warp-specialized training kernel and grad_input ----
    dict(id="W1", file="w4a16_grouped_ws.py",
         old=">> ((group % 2) * 16)) & 0xFFFF",
         new=">> (((group + 1) % 2) * 16)) & 0xFFFF",
         what="dequantizer takes the other group of its scale word (group index off by one): "
              "wrong sums",
         tests=[WS_FWD], compile=[WS_FWD_BUILD]),
    dict(id="W2", file="w4a16_grouped_ws.py",
         old="shift = gl.arange(0, 4, j_layout) * 4",
         new="shift = (3 - gl.arange(0, 4, j_layout)) * 4",
         what="dequantizer's lane order: pair j from nibble 3 - j (inputs permuted): wrong sums",
         tests=[WS_FWD], compile=[WS_FWD_BUILD]),
    dict(id="W3", file="w4a16_grouped_ws.py",
         old="tma_load(x_desc, [k_half, row_start + CONSUMER_ROWS, 0], bar,",
         new="tma_load(x_desc, [k_half, row_start, 0], bar,",
         what="the second consumer's x box holds the first consumer's rows: rows 128-255 of a "
              "tile get rows 0-127's products",
         tests=[WS_FWD], compile=[WS_FWD_BUILD]),
    dict(id="W4", file="w4a16_grouped_ws.py",
         old="tma_load(w_desc, [expert * N + row_block * BLOCK_N, group * WORDS], bar,",
         new="tma_load(w_desc, [expert * N + row_block * BLOCK_N, kb * WORDS], bar,",
         what="code box column from the step, not the scale group: the forward is unchanged "
              "(kb == group), grad_input reads other groups' codes: wrong grad_input",
         tests=[WS_GRAD], compile=[WS_GRAD_BUILD]),
    dict(id="W5", file="w4a16_grouped_ws.py",
         old="if first_row + M64 < row_end:",
         new="if first_row + 2 * M64 < row_end:",
         what="a consumer takes its m64-only path unless its rows run past 128: a full "
              "consumer's rows 64-127 never computed nor stored (256-row tiles)",
         tests=[WS_FWD], compile=[WS_FWD_BUILD]),
    dict(id="W6", file="w4a16_grouped_ws.py",
         old="acc = numerics.scaled(acc, gl.expand_dims(prob, 1), True, False)",
         new="acc = numerics.scaled(acc, gl.expand_dims(prob, 1), False, False)",
         what="router prob multiplied into the fp32 sum before the one rounding (Triton's "
              "order), not the rounded output times the bf16 prob (Marlin's): not the "
              "scheme's bits",
         tests=[PROB_WS], compile=[_ws(x_stages=2, w_stages=3, b_stages=2, grad_input=0,
                                       has_probs=1)]),
    dict(id="W7", file="w4a16_grouped_ws.py",
         old="shape = (num_experts, N, N // BLOCK_N, K // BLOCK_K, num_tiles, K)",
         new="shape = (num_experts, N, N // BLOCK_N - 1, K // BLOCK_K, num_tiles, K)",
         what="grad_input's K loop one row block short (all partitions alike, no hang): the "
              "last 128 weight rows never summed",
         tests=[WS_GRAD], compile=[WS_GRAD_BUILD]),
    dict(id="W8", file="w4a16_grouped_ws.py",
         old="k_half = kb * (BLOCK_K // HALF_K)",
         new="k_half = kb",
         what="x loader's K coordinate advances one 64-input half a step, not two: steps after "
              "the first multiply the wrong x columns",
         tests=[WS_FWD], compile=[WS_FWD_BUILD]),
    # ---- fp8_grouped_ws.py: the FP8 block-scaled kernel ----
    dict(id="F1", file="fp8_grouped_ws.py",
         old="sa = sa_bufs.index(s).slice(HALF_INDEX * HALF, HALF)",
         new="sa = sa_bufs.index(s).slice(0, HALF)",
         what="the second consumer scales its rows by the first consumer's activation scales: "
              "rows 64-127 of a tile wrong",
         tests=[FP8_256], compile=[FP8_BUILD]),
    dict(id="F2", file="fp8_grouped_ws.py",
         old="sa * sb_hi)", new="sa * sb)",
         what="a 256-wide tile's second 128 columns take the first weight block's scale: "
              "columns 128-255 wrong",
         tests=[FP8_256], compile=[FP8_BUILD]),
    dict(id="F3", file="fp8_grouped_ws.py",
         old="w_row = expert * N + nb * BLOCK_N",
         new="w_row = nb * BLOCK_N",
         what="weight tile rows drop the expert offset: every expert multiplies expert 0's "
              "weights (with its own scales)",
         tests=[FP8_256], compile=[FP8_BUILD]),
    dict(id="F4", file="fp8_grouped_ws.py",
         old="tma_load(a_desc, [row_start + HALF, kb * BLOCK_K], bar, a_bufs.index(2 * s + 1))",
         new="tma_load(a_desc, [row_start, kb * BLOCK_K], bar, a_bufs.index(2 * s + 1))",
         what="the second consumer's A box holds the first consumer's rows: rows 64-127 get "
              "rows 0-63's products",
         tests=[FP8_256], compile=[FP8_BUILD]),
    dict(id="F5", file="fp8_grouped_ws.py",
         old="acc = acc * prob", new="acc = acc * prob * prob",
         what="router prob applied twice to the (first) accumulator: rows scaled by prob^2",
         tests=[PROB_FP8], compile=[_fp8(block_n=128, stages=4, has_probs=1)]),
    dict(id="F6", file="fp8_grouped_ws.py",
         old="row_mask = rows < row_end", new="row_mask = rows < row_end - 1",
         what="an expert's last rows (masked store path) lose their last row: unwritten "
              "(torch.empty) output",
         tests=[FP8_256], compile=[FP8_BUILD]),
    dict(id="F7", file="fp8_grouped_ws.py",
         old="return acc + partial * gl.expand_dims(acc_scale, 1)",
         new="return partial * gl.expand_dims(acc_scale, 1)",
         what="each K block's promotion replaces the accumulator instead of adding: only the "
              "last K block's product (K = 384: 3 blocks)",
         tests=[FP8_256], compile=[FP8_BUILD]),
]
