"""The compiled-kernel cache of the Gluon launches: its key is Triton's specialization
(checked against Triton's own binder for sm_90, which runs without a GPU); on a Hopper GPU, a
cached launch gives the output of the first."""
import itertools

import pytest
import torch
from triton.backends.compiler import GPUTarget
from triton.compiler import make_backend
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import create_function_from_signature

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels import w4a16_gluon as wg
from qarl_kernels.launch_cache import CachedLaunch

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
CONSTEXPRS = dict(E_PAD=16, X_STAGES=2, W_STAGES=2, B_STAGES=2, GRAD_INPUT=False,
                  HAS_PROBS=False, num_warps=4)


def _ws_arguments():
    """The WS kernel's runtime arguments, varied in what Triton specializes on (a pointer off
    16 bytes by 4 or 8; integers of 0, 1, 16's multiples and not, past i32 and i64; a
    descriptor's block) and in what it does not (a pointer's 16-byte multiple offset, a few
    tile counts)."""
    codes = torch.empty(16 * 1536, 256, dtype=torch.int32)
    x = torch.empty(512, 2048, dtype=torch.bfloat16)
    words = torch.empty(16, 1536, 9, dtype=torch.int32)
    counts = torch.empty(24, dtype=torch.int32)
    y = torch.empty(512, 1536, dtype=torch.bfloat16)
    descs = [(wg.x_descriptor(x, rows, 1),
              TensorDescriptor.from_tensor(codes, [block_n, 16], wg.word_layout(64)))
             for rows, block_n in ((128, 128), (64, 256))]
    for (x_desc, w_desc), s, c, n, tiles, stride in itertools.product(
            descs, (words, words[:, :, 1:], words[:, :, 4:]),
            (counts, counts[4:], counts[1:], counts[2:]),
            (0, 1, 16, 24, 48, 1536, 2**31, 2**32 + 16), (100, 132, 2**31, 2**63), (1, 8, 9)):
        yield (x_desc, w_desc, s, y, y, c, 16, n, 2048, tiles, 1536 * 9, stride, 1536)


def _decode_arguments():
    """The decode kernel's, likewise: its layouts are constexprs passed in place."""
    codes = torch.empty(16 * 1536, 256, dtype=torch.int32)
    x = torch.empty(513, 2048, dtype=torch.bfloat16)
    words = torch.empty(16, 1536, 8, dtype=torch.int32)
    y = torch.empty(512, 1536, dtype=torch.bfloat16)
    counts = torch.empty(24, dtype=torch.int32)
    w_desc = TensorDescriptor.from_tensor(codes, [128, 16], wg.word_layout())
    acc, word_layout, operand = wg._layouts(128, 64)
    for (box_rows, x_rows), x_ptr, n, stride in itertools.product(
            ((64, x[1:]), (32, x[:512])), (x, x[:, 1:]), (1, 24, 48, 1536, 2**31), (8, 24, 2048)):
        x_desc = wg.x_descriptor(x_rows, box_rows, 1)
        yield (w_desc, x_desc, x_desc, x_ptr, words, y, x_ptr, counts, y, counts, 16, n, 2048,
               stride, 1536 * 8, 8, 1536, acc, wg._acc_layout(64), word_layout, operand)


DECODE_CONSTEXPRS = dict(E_PAD=16, STAGES=3, SWIGLU=False, HAS_PROBS=False, PERSISTENT=False,
                         X_ASYNC=False, TAIL=0, RELEASE=False, EARLY_WORDS=False,
                         REFILL_FIRST=False, SPLIT_K=1, STAGE_ACC=False, num_warps=4)


@pytest.mark.parametrize("kernel,arguments,constexprs", [
    (ws._w4a16_grouped_ws_kernel, _ws_arguments, CONSTEXPRS),
    (wg._w4a16_gluon_kernel, _decode_arguments, DECODE_CONSTEXPRS)])
def test_key_is_tritons_specialization(kernel, arguments, constexprs):
    """A key never joins arguments that Triton specializes apart (a kernel built for others
    would run), nor splits ones it joins (the cache would grow with every new value)."""
    binder = create_function_from_signature(kernel.signature, kernel.params,
                                            make_backend(GPUTarget("cuda", 90, 32)))
    cached = CachedLaunch(kernel)
    pairs = {(cached.key(args, constexprs), str(binder(*args, **constexprs)[1]))
             for args in arguments()}
    keys, specializations = zip(*pairs)
    assert len(set(keys)) == len(pairs) == len(set(specializations)) > 1


def test_key_holds_constexprs_by_value():
    """By name or in place."""
    cached = CachedLaunch(ws._w4a16_grouped_ws_kernel)
    args = next(_ws_arguments())
    assert cached.key(args, CONSTEXPRS) != cached.key(args, dict(CONSTEXPRS, X_STAGES=3))
    rest = {name: v for name, v in CONSTEXPRS.items() if name != "E_PAD"}
    assert cached.key(args + (16, ), rest) != cached.key(args + (32, ), rest)


@pytest.mark.skipif(not HOPPER, reason="launches a Gluon kernel: needs an SM90 GPU")
def test_cached_launch_gives_the_first_launchs_output():
    """The first call compiles through Triton, the second launches the kept kernel."""
    torch.manual_seed(0)
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(4, 256, 512, device="cuda") * 0.05)
    tokens = torch.tensor([300, 0, 7, 129], device="cuda", dtype=torch.int32)
    x = torch.randn(436, 512, device="cuda").bfloat16()
    ws._LAUNCH.compiled.clear()
    first = ws.w4a16_grouped_ws(x, qweight, tokens)
    assert len(ws._LAUNCH.compiled) == 1
    again = ws.w4a16_grouped_ws(x, qweight, tokens)
    assert len(ws._LAUNCH.compiled) == 1
    assert torch.equal(again, first)
    other = torch.randn(436, 512, device="cuda").bfloat16()  # new tensors, the same key
    assert torch.equal(ws.w4a16_grouped_ws(other, qweight, tokens),
                       ws.w4a16_grouped_ws(other.clone(), qweight, tokens))
    assert len(ws._LAUNCH.compiled) == 1
