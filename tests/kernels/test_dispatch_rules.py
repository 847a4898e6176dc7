"""Which path and tiles a call of the W4A16, FP8 and INT8 ops takes, at the thresholds
docs/benchmarks.md and the rules' docstrings state: the decision itself, not the output (every
path computes the same numbers, so a wrong threshold only costs time). Plain host calls on the
CPU, the kernels replaced by recorders and Hopper faked where a rule asks for it."""
import dataclasses
import warnings
from types import SimpleNamespace

import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_gemm

K = 128
QWEIGHT = get_scheme("w4a16").quantize_weight(torch.zeros(2, 64, K))  # two experts


def _grouped_path(monkeypatch, per_expert, hopper=True, keep=False, probs=False,
                  grouped_mm=True):
    """The path w4a16_grouped_linear takes for `per_expert` rows on each of two experts: 'int4'
    (w4a16_grouped_matmul: the Gluon or Triton int4 kernel), 'ws' (the warp-specialized kernel)
    or 'bf16' (dequantize + torch._grouped_mm). hopper: whether the WS kernel applies."""
    taken = []
    monkeypatch.setattr(w4a16_gemm, "torch_grouped_mm_available", lambda device: grouped_mm)
    monkeypatch.setattr(w4a16_gemm, "ws_route", lambda x, qweight: hopper)
    monkeypatch.setattr(w4a16_gemm, "w4a16_grouped_matmul",
                        lambda x, *a, **kw: taken.append("int4") or x)
    monkeypatch.setattr(w4a16_gemm, "w4a16_grouped_ws", lambda x, *a, **kw: taken.append("ws") or x)
    monkeypatch.setattr(w4a16_gemm, "w4a16_operand",
                        lambda q, t: taken.append("bf16") or torch.empty(2, 64, K))
    monkeypatch.setattr(w4a16_gemm, "grouped_mm", lambda x, w, t, use_torch: x)
    x = torch.empty(2 * per_expert, K, dtype=torch.bfloat16)
    qweight = dataclasses.replace(QWEIGHT, keep_operand=keep)
    w4a16_gemm.w4a16_grouped_linear(x, qweight, torch.tensor([per_expert] * 2),
                                    probs=torch.ones(x.shape[0]) if probs else None)
    assert len(taken) == 1
    return taken[0]


@pytest.mark.parametrize("per_expert,hopper,keep,path", [
    # Hopper, no kept operand: the int4 kernel (the Gluon one) to 128 rows an expert, the WS
    # kernel from 129 to 2047, dequantize + torch._grouped_mm from 2048
    (1, True, False, "int4"), (128, True, False, "int4"), (129, True, False, "ws"),
    (511, True, False, "ws"), (512, True, False, "ws"), (2047, True, False, "ws"),
    (2048, True, False, "bf16"),
    # no WS kernel (before Hopper): the int4 kernel to 511, torch._grouped_mm from 512
    (129, False, False, "int4"), (511, False, False, "int4"), (512, False, False, "bf16"),
    # a kept operand: torch._grouped_mm from 256, the int4 kernel below, the WS kernel never
    (129, True, True, "int4"), (255, True, True, "int4"), (256, True, True, "bf16"),
    (255, False, True, "int4"), (256, False, True, "bf16"), (2047, True, True, "bf16"),
])
def test_w4a16_grouped_path_by_rows_per_expert(monkeypatch, per_expert, hopper, keep, path):
    """docs/benchmarks.md: dequantize + torch._grouped_mm from 512 tokens/expert (256 with the
    operand kept), the int4 kernel below that, and on Hopper the WS kernel from 129 to 2047
    without a kept operand. Each bound is a measured crossover: one row to either side of it
    the other path is slower."""
    assert _grouped_path(monkeypatch, per_expert, hopper, keep) == path


@pytest.mark.parametrize("per_expert,hopper,keep,path", [
    (2048, True, False, "ws"), (4096, True, False, "ws"),  # its epilogue applies the probs
    (2048, True, True, "bf16"), (2048, False, False, "bf16"),
    (128, True, False, "int4"), (512, False, False, "bf16"),
])
def test_w4a16_fc2_with_probs_keeps_the_ws_kernel_past_2047(monkeypatch, per_expert, hopper,
                                                          keep, path):
    """fc2 with router probs takes the WS kernel where torch._grouped_mm would run (it has no
    epilogue: a pass over the output saved, 808 -> 686 us at EP8), unless the operand is kept;
    the probs move no other bound."""
    assert _grouped_path(monkeypatch, per_expert, hopper, keep, probs=True) == path


def test_w4a16_without_torch_grouped_mm_keeps_the_int4_kernel(monkeypatch):
    """Where torch._grouped_mm does not run (CUDA before SM90) no batch dequantizes."""
    assert _grouped_path(monkeypatch, 4096, hopper=False, grouped_mm=False) == "int4"
    assert _grouped_path(monkeypatch, 4096, hopper=False, keep=True, grouped_mm=False) == "int4"


def test_w4a16_routed_rows_set_the_rows_per_expert(monkeypatch):
    """A fixed-size exchange's padded x: the path is the routed rows' (checks.tile_rows)."""
    taken = []
    monkeypatch.setattr(w4a16_gemm, "ws_route", lambda x, qweight: True)
    monkeypatch.setattr(w4a16_gemm, "w4a16_grouped_matmul",
                        lambda x, *a, **kw: taken.append("int4") or x)
    x = torch.empty(2 * 4096, K, dtype=torch.bfloat16)
    w4a16_gemm.w4a16_grouped_linear(x, QWEIGHT, torch.tensor([64, 64]), routed_rows=128)
    assert taken == ["int4"]


def test_ws_route_needs_lane_codes_only_in_capture(monkeypatch):
    """The WS kernel makes the weight's lane-order codes on an eager call; inside a CUDA-graph
    capture it runs only where they exist (a capture would record the reorder)."""
    x = torch.empty(4, K, dtype=torch.bfloat16)
    monkeypatch.setattr(w4a16_gemm, "has_lane_codes", lambda qweight: False)
    assert w4a16_gemm.ws_route(x, QWEIGHT, applies=lambda x, q: True)
    assert not w4a16_gemm.ws_route(x, QWEIGHT, applies=lambda x, q: False)
    monkeypatch.setattr(w4a16_gemm, "_capturing", lambda x: True)
    assert not w4a16_gemm.ws_route(x, QWEIGHT, applies=lambda x, q: True)
    monkeypatch.setattr(w4a16_gemm, "has_lane_codes", lambda qweight: True)
    assert w4a16_gemm.ws_route(x, QWEIGHT, applies=lambda x, q: True)


def _dense_path(monkeypatch, rows, capturing, keep=False):
    """The path w4a16_linear takes for `rows` tokens: 'gemv', 'gluon' (w4a16_dense_gluon, what
    _gluon_route hands a CUDA-graph capture on Hopper), 'bf16' (the dequantized operand) or
    'int4' (this file's Triton kernel)."""
    taken, asked, x = [], [], torch.zeros(rows, K, dtype=torch.bfloat16)
    monkeypatch.setattr(w4a16_gemm, "w4a16_gemv", lambda x, q: taken.append("gemv") or x)
    monkeypatch.setattr(w4a16_gemm, "_gluon_route", lambda x, q, config, rows: asked.append(rows)
                        or ((8, 64, 3, 2, 1) if capturing else None))
    monkeypatch.setattr(w4a16_gemm, "w4a16_dense_gluon",
                        lambda x, q, tiles: taken.append("gluon") or x)
    monkeypatch.setattr(w4a16_gemm, "w4a16_operand",
                        lambda q, t: taken.append("bf16") or x.new_zeros(K, K))
    monkeypatch.setattr(w4a16_gemm, "_launch", lambda x, *a, **kw: taken.append("int4") or x)
    qweight = dataclasses.replace(get_scheme("w4a16").quantize_weight(torch.zeros(K, K)),
                                  keep_operand=keep)
    w4a16_gemm.w4a16_linear(x, qweight)
    assert len(taken) == 1
    # only a batch the Gluon kernel may take asks for its tiles (an eager call then makes the
    # weight's lane-order codes, which a graph of the GEMV or past 512 tokens never reads)
    assert bool(asked) == (taken[0] == "gluon" or (not capturing and 1 < rows <= (
        w4a16_gemm.DENSE_KEPT_GLUON_MAX_ROWS if keep else w4a16_gemm.DENSE_GLUON_MAX_ROWS)))
    return taken[0]


@pytest.mark.parametrize("rows,capturing,keep,path", [
    # one token: the GEMV, eager and in graphs
    (1, False, False, "gemv"), (1, True, False, "gemv"), (1, True, True, "gemv"),
    # eager: the int4 kernel below 256 tokens (64 with the operand kept), the operand from there
    (2, False, False, "int4"), (255, False, False, "int4"), (256, False, False, "bf16"),
    (63, False, True, "int4"), (64, False, True, "bf16"),
    # CUDA-graph capture on Hopper: the Gluon kernel from 2 to 512 tokens (64 with the operand
    # kept), then the operand
    (2, True, False, "gluon"), (512, True, False, "gluon"), (513, True, False, "bf16"),
    (64, True, True, "gluon"), (65, True, True, "bf16"),
])
def test_w4a16_dense_path_by_tokens(monkeypatch, rows, capturing, keep, path):
    """w4a16_linear's bounds: DENSE_GEMV_ROWS (1), DENSE_GLUON_MAX_ROWS (512) and
    DENSE_KEPT_GLUON_MAX_ROWS (64) in graphs, DENSE_DEQUANT_ROWS (256) and
    DENSE_KEPT_OPERAND_ROWS (64) outside the Gluon kernel: each the measured crossover of the
    two paths beside it (docs/kernel_rounds.md rounds 34 and 54, docs/benchmarks.md)."""
    assert _dense_path(monkeypatch, rows, capturing, keep) == path


@pytest.mark.parametrize("per_expert,gluon,fused", [
    (64, False, True), (65, False, False), (65, True, True), (128, True, True)])
def test_w4a16_fc1_fuses_the_swiglu_to_64_rows_per_expert(monkeypatch, per_expert, gluon, fused):
    """The fused fc1 + SwiGLU up to 64 rows an expert (0.58x the unfused time at 128), and
    wherever the Gluon kernel runs (its own fused epilogue)."""
    taken = []
    monkeypatch.setattr(w4a16_gemm, "_gluon_route", lambda *a: (8, 64, 3, None, None) if gluon
                        else None)
    monkeypatch.setattr(w4a16_gemm, "w4a16_grouped_swiglu",
                        lambda x, *a, **kw: taken.append("fused") or x)
    monkeypatch.setattr(w4a16_gemm, "w4a16_grouped_linear",
                        lambda x, *a, **kw: taken.append("gemm") or x)
    monkeypatch.setattr(w4a16_gemm, "gated_activation", lambda h: h)
    x = torch.empty(2 * per_expert, K, dtype=torch.bfloat16)
    w4a16_gemm.w4a16_grouped_swiglu_op(x, QWEIGHT, torch.tensor([per_expert] * 2))
    assert taken == ["fused" if fused else "gemm"]


def _route(monkeypatch, experts, n, k, rows, capturing, lane_codes=True, config=None,
           applies=True):
    """_gluon_route's tiles for a weight [experts, n, k] (experts None: dense [n, k]) on a faked
    Hopper GPU of 132 SMs (applies: the kernel takes the tensors), in CUDA-graph capture or
    eager."""
    monkeypatch.setattr(w4a16_gemm, "gluon_applies", lambda x, qweight: applies)
    monkeypatch.setattr(w4a16_gemm, "_capturing", lambda x: capturing)
    monkeypatch.setattr(w4a16_gemm, "has_lane_codes", lambda qweight: lane_codes)
    monkeypatch.setattr(w4a16_gemm, "lane_codes", lambda qweight: None)
    monkeypatch.setattr(w4a16_gemm, "split_ring", lambda device: None)
    monkeypatch.setattr(w4a16_gemm, "_dense_counts", lambda x: "counts")
    monkeypatch.setattr(w4a16_gemm, "sm_count", lambda device: 132)
    shape = (n, k) if experts is None else (experts, n, k)
    qweight = SimpleNamespace(in_features=k, data=torch.empty(shape, device="meta"))
    x = SimpleNamespace(is_cuda=True, device=torch.device("cuda"))
    return w4a16_gemm._gluon_route(x, qweight, config, rows)


@pytest.mark.parametrize("experts,n,k,rows,eager", [
    (16, 1536, 2048, 64, None),  # EP8 decode: the Gluon kernel's host time costs more eager
    (16, 1536, 2048, 1024, None),
    (128, 1536, 2048, 8 * 1024, (64, 128, 3, None, None)),  # from 64 rows an expert at E >= 64
    (128, 1536, 2048, 128 * 63, None),
    (128, 1536, 2048, 128 * 129, None),  # past 128 rows an expert: not the Gluon kernel
    (None, 2048, 4096, 8, None),  # dense calls: eagerly this file's kernel (30 us less host)
])
def test_gluon_route_eager_and_in_capture(monkeypatch, experts, n, k, rows, eager):
    """A CUDA-graph capture takes the Gluon kernel wherever its rules have tiles; an eager call
    only where its GPU time saves more than its 30 us longer launch (E >= 64 from 64 rows an
    expert, round 8), and no dense call."""
    from qarl_kernels.w4a16_gluon_rules import gluon_dense_tiles, gluon_tiles
    captured = (gluon_dense_tiles(rows, n, k, 132) if experts is None
                else gluon_tiles(rows, experts, n, k))
    assert _route(monkeypatch, experts, n, k, rows, capturing=True) == captured
    assert _route(monkeypatch, experts, n, k, rows, capturing=False) == eager


def test_gluon_route_needs_the_tensors_and_lane_codes(monkeypatch):
    """Tensors the kernel cannot read (before Hopper, other groups, misaligned) take the Triton
    kernel. The lane-order codes are made eagerly: a capture that finds none takes the Triton
    kernel, and says so; a given config always does."""
    for capturing, experts, rows in ((True, 16, 64), (False, 128, 8192), (True, None, 8)):
        assert _route(monkeypatch, experts, 1536, 2048, rows, capturing)
        assert _route(monkeypatch, experts, 1536, 2048, rows, capturing, applies=False) is None
    with pytest.warns(UserWarning, match="Run one eager step before capturing"):
        assert _route(monkeypatch, 16, 1536, 2048, 64, capturing=True, lane_codes=False) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _route(monkeypatch, 16, 1536, 2048, 64, capturing=True,
                      config=w4a16_gemm.W4A16Config(16, 64)) is None


C = w4a16_gemm.W4A16Config


@pytest.mark.parametrize("rows,experts,k,config", [
    # one token of top-8 (up to 16 rows): the smallest tiles, most programs in flight
    (16, 128, 768, C(16, 64)), (16, 1, 4096, C(16, 64)),
    # short K (768: three 256-input steps): 8 warps to 8 rows an expert, 32-token tiles to 16
    (17, 128, 768, C(16, 128, num_warps=8, num_stages=2)),
    (128, 16, 768, C(16, 128, num_warps=8, num_stages=2)),
    (136, 16, 768, C(16, 128, num_warps=8, num_stages=2)),  # 8.5 rows an expert count as 8
    (128, 16, 1024, C(16, 128, num_warps=8, num_stages=2)),  # K to 1024 (four steps)
    (144, 16, 768, C(32, 128, block_k=128)), (256, 16, 768, C(32, 128, block_k=128)),
    (128, 16, 2048, C(16, 64)), (144, 16, 2048, C(32, 128)),
    # 64-token tiles of 128-input steps from 17 to 32 rows an expert
    (272, 16, 768, C(64, 128, block_k=128)), (512, 16, 2048, C(64, 128, block_k=128)),
    (528, 16, 2048, C(32, 128)), (1024, 16, 2048, C(32, 128)),
    # from 65 rows an expert 128-token tiles: each weight tile unpacked once
    (1040, 16, 2048, C(128, 128, num_warps=8)),
])
def test_w4a16_triton_tiles_by_rows_per_expert(rows, experts, k, config):
    """default_config: the H100 sweep's winners in CUDA graphs (docs/kernel_rounds.md rounds
    4-5), at each bound of tokens per expert."""
    assert w4a16_gemm.default_config(rows, experts, 1536, k, 128) == config


def test_w4a16_fused_swiglu_tiles_halve_the_weight_rows():
    """swiglu_config: from 32-token tiles the fused program reads gate and up rows, so half the
    unfused weight rows (and 128-token tiles one stage fewer, to fit shared memory)."""
    assert w4a16_gemm.swiglu_config(128, 16, 1536, 2048, 128) == C(16, 64)
    assert w4a16_gemm.swiglu_config(144, 16, 1536, 2048, 128) == C(32, 64)
    assert w4a16_gemm.swiglu_config(1040, 16, 1536, 2048, 128) == C(128, 64, num_warps=8,
                                                                        num_stages=2)


@pytest.mark.parametrize("rows,config", [
    (16, C(16, 64, block_k=128, split_k=8)), (17, C(32, 64, block_k=128, split_k=8)),
    (128, C(32, 64, block_k=128, split_k=4)), (129, C(64, 64, block_k=128, split_k=2)),
    (256, C(64, 64, block_k=128, split_k=2)),
    (257, C(128, 128, num_warps=8)),  # training sizes: default_config's tiles, no split
])
def test_w4a16_dense_triton_tiles(monkeypatch, rows, config):
    """dense_config on 132 SMs, o_proj (2048 x 4096): 64-row weight tiles over 128-input steps
    to 256 tokens, K split while six waves hold 16- and 32-token tiles, two waves 64-token
    ones (round 32)."""
    from qarl_kernels import split_k
    monkeypatch.setattr(split_k, "sm_count", lambda device: 132)
    assert w4a16_gemm.dense_config(rows, 2048, 4096, 128, torch.device("cuda")) == config


@pytest.mark.parametrize("k,wanted,block", [
    (2048, 256, 256), (768, 256, 256), (640, 256, 128), (384, 256, 128), (320, 256, 128),
    (2048, 512, 512), (1536, 512, 512), (2560, 512, 512), (2304, 512, 256),
])
def test_w4a16_k_step_divides_k(k, wanted, block):
    """block_k_for: the largest power of two in [128, wanted] dividing K, else 128 (a partial
    last step is masked; never under 128, where a pair plane's MMA spans fewer than 16 inputs)."""
    assert w4a16_gemm.block_k_for(k, wanted) == block


def _fp8_weight(experts, n=1536, k=2048):
    return SimpleNamespace(in_features=k, out_features=n,
                           data=torch.empty(experts, n, k, device="meta"),
                           scale=torch.empty(experts, n // 128, k // 128, device="meta"))


@pytest.mark.parametrize("experts,k,rows,tiles", [
    # below the rows where the WS kernel starts on Hopper (2048, and 32 an expert): the
    # decode tiles
    (16, 2048, 2047, (64, 64, 4, 4)), (128, 768, 4095, (16, 128, 4, 3)),
    # from it the prefill tiles: 64 x 128, 32-token tiles to 32 rows an expert, 128 x 128 with
    # 8 warps past 512 at long K
    (16, 2048, 2048, (64, 128, 4, 4)), (128, 768, 4096, (32, 128, 4, 4)),
    (64, 768, 64 * 32, (32, 128, 4, 4)), (64, 768, 64 * 33, (64, 128, 4, 4)),
    (4, 2048, 4 * 512, (64, 128, 4, 4)), (4, 2048, 4 * 513, (128, 128, 8, 3)),
    (4, 768, 4 * 513, (64, 128, 4, 4)),
])
def test_fp8_grouped_triton_tiles(monkeypatch, experts, k, rows, tiles):
    """fp8_block_grouped_matmul's Triton tiles where the WS kernel does not run: _decode_tiles
    (round 33) below the rows where the WS kernel would start on Hopper, _tiles (the H100
    sweep) from them."""
    from qarl_kernels import fp8_gemm
    launched = []
    monkeypatch.setattr(fp8_gemm, "ws_applies", lambda xq, qweight, rows: False)
    monkeypatch.setattr(fp8_gemm, "_launch", lambda *a, **kw: launched.append(a[6:10]))
    xq = torch.empty(max(rows, 2048), k, dtype=torch.uint8)
    counts = torch.tensor([rows // experts] * experts)
    fp8_gemm.fp8_block_grouped_matmul(xq[:rows], None, _fp8_weight(experts, k=k), counts)
    assert launched == [tiles]


def test_fp8_grouped_asks_the_ws_kernel_for_the_routed_rows(monkeypatch):
    """A fixed-size exchange's padded x: the WS kernel is chosen for the rows routing fills."""
    from qarl_kernels import fp8_gemm
    asked = []
    monkeypatch.setattr(fp8_gemm, "ws_applies", lambda xq, qweight, rows: asked.append(rows))
    monkeypatch.setattr(fp8_gemm, "_launch", lambda *a, **kw: None)
    xq = torch.empty(8192, 2048, dtype=torch.uint8)
    fp8_gemm.fp8_block_grouped_matmul(xq, None, _fp8_weight(16), torch.tensor([64] * 16),
                                      routed_rows=1024)
    assert asked == [1024]


def _int8_grouped_tiles(monkeypatch, rows, experts, routed_rows=None):
    """(BLOCK_M, BLOCK_N) of int8_matmul's grouped launch, the kernel replaced by a recorder."""
    from qarl_kernels import int8_gemm
    launched = []

    class Kernel:
        def __getitem__(self, grid):
            return lambda *a, **kw: launched.append((kw["BLOCK_M"], kw["BLOCK_N"]))
    monkeypatch.setattr(int8_gemm, "_int8_gemm_kernel", Kernel())
    qweight = SimpleNamespace(data=torch.empty(experts, 64, K, dtype=torch.int8),
                              scale=torch.empty(experts, 64, 1))
    xq = torch.empty(rows, K, dtype=torch.int8)
    int8_gemm.int8_matmul(xq, torch.empty(rows, 1), qweight, torch.tensor([0] * experts),
                          routed_rows=routed_rows)
    return launched[0]


@pytest.mark.parametrize("per_expert,tiles", [
    (8, (16, 64)), (9, (64, 128)), (64, (64, 128)), (65, (128, 128))])
def test_int8_grouped_tiles_by_rows_per_expert(monkeypatch, per_expert, tiles):
    """int8_tiles, the H100 sweep's winners (each within 3% of the best of the cases it
    covers): 16 x 64 to 8 rows an expert, 64 x 128 to 64, then 128 x 128."""
    assert _int8_grouped_tiles(monkeypatch, 4 * per_expert, 4) == tiles


def test_int8_grouped_tiles_for_the_routed_rows(monkeypatch):
    """A fixed-size exchange's padded x: tiles for the rows routing fills (checks.tile_rows)."""
    assert _int8_grouped_tiles(monkeypatch, 4 * 128, 4, routed_rows=4 * 8) == (16, 64)
