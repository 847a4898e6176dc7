"""The benchmark's stream-only floor kernel (Hopper only). CI compiles it for sm_90 offline;
on an H100 it runs and its fold of the words is checked."""
import json
import os
import re
import subprocess
import sys

import pytest
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

from qarl_kernels import stream_floor as sf
from qarl_kernels.w4a16_gluon import STAGE_WORDS, _WORD_LAYOUT

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


def _compile_for_sm90(width: int) -> dict:
    words = torch.empty(1024, width, dtype=torch.int32)
    desc = TensorDescriptor.from_tensor(words, [sf.BLOCK_N, STAGE_WORDS], _WORD_LAYOUT)
    constexprs = {"STAGE_COUNT": sf.STAGES, "num_warps": 4}
    signature = {"desc": mangle_type(desc), "out_ptr": "*i32", "k_blocks": "i32"}
    signature.update({name: "constexpr" for name in constexprs})
    kernel = triton.compile(
        GluonASTSource(fn=sf._stream_kernel, signature=signature, constexprs=constexprs),
        target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    ptx = kernel.asm["ptx"]
    return {"tma_loads": len(re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::\w+\.global",
                                        ptx)),
            "global_loads": len(re.findall(r"ld\.global", ptx)),
            "shared": kernel.metadata.shared}


@pytest.mark.parametrize("width", [96, 256])  # words per row of W2 (K=768) and W13 (K=2048)
def test_compiles_for_sm90(width):
    """In a child process: the tests run Triton's interpreter, which cannot build GPU code."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, __file__, str(width)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    # STAGES - 1 boxes in the prologue and one refill site; the words come only by TMA
    assert facts["tma_loads"] == sf.STAGES
    assert facts["global_loads"] == 0
    assert facts["shared"] >= sf.STAGES * sf.BLOCK_N * STAGE_WORDS * 4


def test_bad_shape_names_the_fix():
    with pytest.raises(ValueError, match="multiple of 64"):
        sf.stream_words(torch.zeros(100, 256, dtype=torch.int32), torch.zeros(1, dtype=torch.int32))


@pytest.mark.skipif(not HOPPER, reason="Gluon and TMA need an SM90 GPU")
def test_streams_every_word():
    words = torch.randint(-2**31, 2**31 - 1, (4 * sf.BLOCK_N, 96), dtype=torch.int32,
                          device="cuda")
    out = torch.empty(4, dtype=torch.int32, device="cuda")
    sf.stream_words(words, out)
    torch.cuda.synchronize()
    # per tile: the xor over K blocks, summed over the tile's [BLOCK_N, 16] positions
    tiles = words.view(4, sf.BLOCK_N, 6, STAGE_WORDS)
    folded = tiles[:, :, 0]
    for kb in range(1, 6):
        folded = folded ^ tiles[:, :, kb]
    want = folded.to(torch.int64).sum((1, 2))
    want = ((want + 2**31) % 2**32 - 2**31).to(torch.int32)  # int32 wrap-around
    assert torch.equal(out, want)


if __name__ == "__main__":
    print(json.dumps(_compile_for_sm90(int(sys.argv[1]))))
