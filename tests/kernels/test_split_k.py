"""K split over programs (kernels/split_k.py): the slices meet in slice order, so INT8's int32
sums equal the reference bit for bit and W4A16's and FP8's fp32 sums repeat; the counters end
at zero."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import split_k
from qarl_kernels.fp8_gemm import fp8_block_matmul
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.int8_gemm import int8_matmul
from qarl_kernels.int8_quantize import int8_quantize_activation
from qarl_kernels.w4a16_gemm import W4A16Config, w4a16_grouped_matmul, w4a16_linear


def _counters_zero(device):
    counters, _ = split_k._rings[torch.empty(0, device=device).device]  # "cuda" -> "cuda:0"
    return int(counters.abs().sum()) == 0


@pytest.mark.parametrize("split", [2, 3, 4])
@pytest.mark.parametrize("rows,n,k", [(1, 32, 1024), (17, 96, 384), (5, 40, 256)])
def test_int8_dense_split_equals_the_reference(split, rows, n, k, device):
    torch.manual_seed(0)
    scheme = get_scheme("int8")
    qweight = scheme.quantize_weight(torch.randn(n, k, device=device))
    x = torch.randn(rows, k, device=device).bfloat16()
    xq, xs = int8_quantize_activation(x)
    got = int8_matmul(xq, xs, qweight, tiles=(16, 32, 4, 1, split))
    assert torch.equal(got, scheme.reference_matmul(x, qweight))
    assert _counters_zero(device)


@pytest.mark.parametrize("counts", [[3, 0, 17, 1], [0, 0, 0, 6]])
def test_int8_grouped_split_equals_the_reference(counts, device):
    torch.manual_seed(1)
    scheme = get_scheme("int8")
    qweight = scheme.quantize_weight(torch.randn(4, 48, 384, device=device))
    tokens = torch.tensor(counts)
    x = torch.randn(sum(counts), 384, device=device).bfloat16()
    xq, xs = int8_quantize_activation(x)
    got = int8_matmul(xq, xs, qweight, tokens, tiles=(16, 32, 4, 1, 3))
    assert torch.equal(got, scheme.reference_grouped_matmul(x, qweight, tokens))
    assert _counters_zero(device)


@pytest.mark.parametrize("scheme_name", ["int8", "fp8-block"])
def test_each_output_tile_takes_its_own_partials(scheme_name, device, monkeypatch):
    """A tile's K slices meet in that tile's partials and counter. The interpreter runs the
    programs one by one, so tiles sharing a slot would still sum right there (and on the GPU
    race): every slot of a 2 x 2-tile call must be written."""
    from qarl_kernels import fp8_gemm, int8_gemm
    module = int8_gemm if scheme_name == "int8" else fp8_gemm
    buffers = []

    def marked(*args):
        split, partials, counters = split_k.split_buffers(*args)
        floor = (torch.iinfo if partials.dtype == torch.int32 else torch.finfo)(partials.dtype)
        buffers.append((partials.fill_(floor.min), floor.min))
        return split, partials, counters
    monkeypatch.setattr(module, "split_buffers", marked)
    torch.manual_seed(5)
    scheme = get_scheme(scheme_name)
    qweight = scheme.quantize_weight(torch.randn(40, 384, device=device))
    x = torch.randn(17, 384, device=device).bfloat16()
    if scheme_name == "int8":
        int8_matmul(*int8_quantize_activation(x), qweight, tiles=(16, 32, 4, 1, 3))
    else:
        fp8_block_matmul(*fp8_quantize_activation(x), qweight, tiles=(16, 32, 4, 1, 3))
    (partials, unwritten), = buffers
    assert partials.numel() == 4 * 3 * 16 * 32 and (partials != unwritten).all()
    assert _counters_zero(device)


@pytest.mark.parametrize("split", [2, 4])
def test_w4a16_split_repeats_its_bits(split, device, assert_gemm_close):
    """fp32 slices added in slice order: the same bits on every call, near the reference."""
    torch.manual_seed(2)
    scheme = get_scheme("w4a16-g128")
    qweight = scheme.quantize_weight(torch.randn(48, 1024, device=device))
    x = torch.randn(5, 1024, device=device).bfloat16()
    config = W4A16Config(16, 16, block_k=128, split_k=split)
    first = w4a16_linear(x, qweight, config)
    assert torch.equal(w4a16_linear(x, qweight, config), first)
    assert_gemm_close(first, scheme.reference_matmul(x, qweight))
    assert _counters_zero(device)


def test_w4a16_grouped_split_with_empty_experts(device, assert_gemm_close):
    torch.manual_seed(3)
    scheme = get_scheme("w4a16-g32")
    qweight = scheme.quantize_weight(torch.randn(4, 40, 256, device=device))
    tokens = torch.tensor([3, 0, 17, 1])
    x = torch.randn(21, 256, device=device).bfloat16()
    got = w4a16_grouped_matmul(x, qweight, tokens, W4A16Config(16, 16, block_k=128, split_k=2))
    assert_gemm_close(got, scheme.reference_grouped_matmul(x, qweight, tokens))
    assert _counters_zero(device)


def test_split_rule(monkeypatch):
    """Doubled while `waves` waves hold the programs and each slice keeps `min_steps` K steps;
    never off CUDA (the interpreter's tests pass their splits)."""
    monkeypatch.setattr(split_k, "sm_count", lambda device: 132)
    cuda = torch.device("cuda")
    assert split_k.split_for(64, 32, cuda) == 4  # o_proj, 16 x 32 tiles: 64 programs
    assert split_k.split_for(160, 16, cuda) == 1  # qkv: 160 programs already
    assert split_k.split_for(160, 16, cuda, waves=4) == 2
    assert split_k.split_for(32, 3, cuda) == 1  # 3 K steps: no two slices of two
    assert split_k.split_for(64, 16, cuda, waves=4, min_steps=4) == 4  # slices of 4 steps
    assert split_k.split_for(8, 64, cuda) == 8  # at most 8
    assert split_k.split_for(66, 32, cuda) == 4  # 264 programs: two waves, to the last SM
    assert split_k.split_for(67, 32, cuda) == 2
    assert split_k.split_for(64, 32, torch.device("cpu")) == 1


def test_calls_take_the_next_stretch_of_the_ring():
    cpu = torch.device("cpu")
    assert split_k.split_counters(cpu, split_k.MAX_TILES + 1) is None
    first = split_k.split_counters(cpu, 4)
    second = split_k.split_counters(cpu, 4)
    assert first.dtype == torch.int32 and second.data_ptr() == first.data_ptr() + 16
    for _ in range(split_k.RING_TILES // split_k.MAX_TILES):  # past the end: from the start
        last = split_k.split_counters(cpu, split_k.MAX_TILES)
    assert last.data_ptr() == split_k._rings[cpu][0].data_ptr()


def test_a_call_that_does_not_split_takes_no_buffers(monkeypatch):
    """split_k 1: no partials allocated, no counters taken from the ring (each call would
    allocate a buffer of its output's size and move the ring on)."""
    cpu = torch.device("cpu")
    ring = [torch.zeros(split_k.RING_TILES, dtype=torch.int32), 0]
    monkeypatch.setitem(split_k._rings, cpu, ring)
    y = torch.empty(4, 8)
    split, partials, counters = split_k.split_buffers(1, 4, 32, torch.float32, y)
    assert split == 1 and partials is y and counters is y and ring[1] == 0
    split, partials, counters = split_k.split_buffers(2, 4, 32, torch.float32, y)
    assert split == 2 and partials.numel() == 4 * 2 * 32 and counters.numel() == 4
    assert ring[1] == 4


def test_a_call_that_fills_the_ring_to_its_end_takes_its_last_counters(monkeypatch):
    """The ring restarts only where the call's tiles run past its end: a stretch that ends at
    the last counter is the ring's last, so calls on other streams keep distinct counters."""
    cpu = torch.device("cpu")
    ring = [torch.zeros(split_k.RING_TILES, dtype=torch.int32), split_k.RING_TILES - 4]
    monkeypatch.setitem(split_k._rings, cpu, ring)
    assert split_k.split_counters(cpu, 4).data_ptr() == ring[0][-4:].data_ptr()
    assert split_k.split_counters(cpu, 1).data_ptr() == ring[0].data_ptr()  # past it: restart


@pytest.mark.parametrize("split", [2, 3])
def test_fp8_dense_split_repeats_its_bits(split, device):
    torch.manual_seed(4)
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(256, 640, device=device))
    x = torch.randn(5, 640, device=device).bfloat16()
    xq, xs = fp8_quantize_activation(x)
    first = fp8_block_matmul(xq, xs, qweight, tiles=(16, 64, 4, 1, split))
    assert torch.equal(fp8_block_matmul(xq, xs, qweight, tiles=(16, 64, 4, 1, split)), first)
    want = scheme.reference_matmul(x, qweight).float()
    assert float((first.float() - want).norm() / want.norm()) < 1e-2
    assert _counters_zero(device)


def test_dense_rules_split_decode_calls_only(monkeypatch):
    """Each scheme's dense rule on a GPU of 132 SMs: o_proj at 8 tokens splits K; W4A16 at 512
    tokens does not; FP8 from 33 to 256 tokens takes 64-row tiles, 32 columns wide to 128
    tokens, K split while they fit two waves and each slice walks block_n / 4 K steps
    (decode_tiles), and past 256 one slice."""
    from qarl_kernels import fp8_gemm, w4a16_gemm
    monkeypatch.setattr(split_k, "sm_count", lambda device: 132)
    cuda = torch.device("cuda")
    assert w4a16_gemm.dense_config(8, 2048, 4096, 128, cuda).split_k == 8
    assert w4a16_gemm.dense_config(512, 2048, 4096, 128, cuda).split_k == 1
    assert fp8_gemm.dense_tiles(8, 2048, 4096, cuda) == (16, 32, 4, 4, 8)
    assert fp8_gemm.dense_tiles(32, 2048, 4096, cuda) == (16, 32, 4, 4, 4)  # 2 row tiles
    assert fp8_gemm.dense_tiles(8, 2048, 1024, cuda) == (16, 32, 4, 4, 2)  # slices of 4 steps
    assert fp8_gemm.dense_tiles(8, 5120, 2048, cuda) == (16, 32, 4, 4, 4)  # 160: five waves
    assert fp8_gemm.dense_tiles(64, 2048, 4096, cuda) == (64, 32, 4, 4, 4)  # 64 programs
    assert fp8_gemm.dense_tiles(64, 2048, 2048, cuda) == (64, 32, 4, 4, 2)  # 8-step slices
    assert fp8_gemm.dense_tiles(128, 2560, 2048, cuda) == (64, 32, 4, 4, 1)  # 160 programs
    assert fp8_gemm.dense_tiles(256, 2048, 4096, cuda) == (64, 64, 4, 4, 2)  # 128 programs
    assert fp8_gemm.dense_tiles(256, 2048, 2048, cuda) == (64, 64, 4, 4, 1)  # 16-step slices
    assert fp8_gemm.dense_tiles(512, 2048, 4096, cuda)[-1] == 1


@pytest.mark.parametrize("rows,n,cublas", [
    (32, 2048, False), (64, 5120, False), (128, 5120, True), (256, 2560, False),
    (256, 5120, True), (257, 2048, True),
    (32, 16384, False),  # 512 programs, but 16 x 32 tiles to 32 tokens
    (128, 4224, False), (128, 4352, True)])  # 264 programs fit two waves, 272 do not
def test_fp8_dense_takes_cublas_where_decode_tiles_pass_two_waves(rows, n, cublas, monkeypatch):
    """On Hopper (132 SMs) cuBLAS's scaled_mm past 32 tokens where decode_tiles' programs pass
    two waves (qkv's 5120 outputs from 128 tokens: 320) or past 256 tokens."""
    from types import SimpleNamespace
    from qarl_kernels import fp8_gemm
    monkeypatch.setattr(fp8_gemm, "sm_count", lambda device: 132)
    monkeypatch.setattr(fp8_gemm, "is_hopper", lambda device: True)
    x = SimpleNamespace(is_cuda=True, device=torch.device("cuda"), shape=(rows, 2048))
    qweight = SimpleNamespace(out_features=n, in_features=2048)
    assert fp8_gemm.scaled_mm_applies(x, qweight) == cublas


def test_int8_dense_tiles(monkeypatch):
    """INT8's dense rule on a GPU of 132 SMs: 16 x 32 tiles to 32 tokens, K split while four
    waves hold them in at most four slices (o_proj to 16 tokens: four waves would allow eight),
    decode_tiles to 256, 64 x 64 tiles of one slice to 512 where they fit three waves (o_proj's
    2048 outputs; not qkv's 5120 at 384 tokens: 480 programs), else 128 x 128 tiles."""
    from qarl_kernels import int8_gemm
    monkeypatch.setattr(split_k, "sm_count", lambda device: 132)
    monkeypatch.setattr(int8_gemm, "sm_count", lambda device: 132)
    cuda = torch.device("cuda")
    assert int8_gemm.dense_tiles(8, 2048, 4096, cuda) == (16, 32, 4, 4, 4)
    assert int8_gemm.dense_tiles(32, 2048, 4096, cuda) == (16, 32, 4, 4, 4)  # 128 programs
    assert int8_gemm.dense_tiles(8, 2560, 2048, cuda) == (16, 32, 4, 4, 4)  # 16 K steps
    assert int8_gemm.dense_tiles(8, 5120, 2048, cuda) == (16, 32, 4, 4, 2)  # 160 programs
    assert int8_gemm.dense_tiles(64, 2048, 4096, cuda) == (64, 32, 4, 4, 4)
    assert int8_gemm.dense_tiles(200, 2048, 2048, cuda) == (64, 64, 4, 4, 1)
    assert int8_gemm.dense_tiles(512, 2048, 4096, cuda) == (64, 64, 4, 4, 1)  # 256 programs
    assert int8_gemm.dense_tiles(384, 5120, 2048, cuda) == (128, 128, 8, 3, 1)
    assert int8_gemm.dense_tiles(384, 4224, 2048, cuda) == (64, 64, 4, 4, 1)  # 396: 3 waves
    assert int8_gemm.dense_tiles(512, 2560, 2048, cuda) == (64, 64, 4, 4, 1)  # 320 programs
    assert int8_gemm.dense_tiles(1024, 1024, 4096, cuda) == (128, 128, 8, 3, 2)  # 64 programs
    assert int8_gemm.dense_tiles(4096, 2048, 4096, cuda) == (128, 128, 4, 3, 1)
