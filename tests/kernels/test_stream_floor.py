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
    constexprs = {"STAGE_COUNT": sf.stages_for(width // STAGE_WORDS), "num_warps": 4}
    signature = {"desc": mangle_type(desc), "out_ptr": "*i32", "k_blocks": "i32"}
    signature.update({name: "constexpr" for name in constexprs})
    kernel = triton.compile(
        GluonASTSource(fn=sf._stream_kernel, signature=signature, constexprs=constexprs),
        target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "launch_pdl": True})
    ptx = kernel.asm["ptx"]
    body = ptx[ptx.index(".entry"):]
    box = r"cp\.async\.bulk\.tensor\.2d\.shared::\w+\.global"
    wait = body.index("griddepcontrol.wait")
    return {"tma_loads": len(re.findall(box, body)),
            "boxes_before_wait": len(re.findall(box, body[:wait])),
            "releases_before_wait": body.count("griddepcontrol.launch_dependents", 0, wait),
            "releases": body.count("griddepcontrol.launch_dependents"),
            "global_loads": len(re.findall(r"ld\.global", ptx)),
            "shared": kernel.metadata.shared}


# words per row of W2 (K=768) and W13 (K=2048), and of a K=4096 the ring does not hold whole
@pytest.mark.parametrize("width", [96, 256, 512])
def test_compiles_for_sm90(width):
    """In a child process: the tests run Triton's interpreter, which cannot build GPU code."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, __file__, str(width)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    stages = sf.stages_for(width // STAGE_WORDS)
    assert stages == min(width // STAGE_WORDS + 1, sf.MAX_STAGES)
    # STAGES - 1 boxes asked for before the wait for the previous call, and one refill site;
    # the next call let in where the last box is asked for: before the wait, or at a refill
    # (the compiler may copy the first site into a path for an empty K)
    assert facts["tma_loads"] == stages
    assert facts["boxes_before_wait"] == stages - 1
    assert facts["releases_before_wait"] == 1
    assert facts["releases"] >= 2
    assert facts["global_loads"] == 0  # the words come only by TMA
    assert facts["shared"] >= stages * sf.BLOCK_N * STAGE_WORDS * 4


def test_bad_shape_names_the_fix():
    with pytest.raises(ValueError, match="multiple of 64"):
        sf.stream_words(torch.zeros(100, 256, dtype=torch.int32), torch.zeros(1, dtype=torch.int32))


@pytest.mark.skipif(not HOPPER, reason="Gluon and TMA need an SM90 GPU")
@pytest.mark.parametrize("width", [96, 512])  # the whole K ahead; a ring with refills
def test_streams_every_word(width):
    words = torch.randint(-2**31, 2**31 - 1, (4 * sf.BLOCK_N, width), dtype=torch.int32,
                          device="cuda")
    out = torch.empty(4, dtype=torch.int32, device="cuda")
    sf.stream_words(words, out)
    torch.cuda.synchronize()
    # per tile: the xor over K blocks, summed over the tile's [BLOCK_N, 16] positions
    blocks = width // STAGE_WORDS
    tiles = words.view(4, sf.BLOCK_N, blocks, STAGE_WORDS)
    folded = tiles[:, :, 0]
    for kb in range(1, blocks):
        folded = folded ^ tiles[:, :, kb]
    want = folded.to(torch.int64).sum((1, 2))
    want = ((want + 2**31) % 2**32 - 2**31).to(torch.int32)  # int32 wrap-around
    assert torch.equal(out, want)


if __name__ == "__main__":
    print(json.dumps(_compile_for_sm90(int(sys.argv[1]))))
