"""Session 71: fc2's two prob epilogues compiled for sm_90a on the CPU (Triton's own ptxas, the
local Triton's version: the GPU runs 3.6's, which may schedule otherwise), the tiles of round
62's table: registers, spills, shared memory and SASS counts per build. Run from the repository
root: `python docs/results/suite_after_marlin_order_h200_2026-12-01/epilogue_sass_cpu.py`."""
import os
import re
import subprocess
import sys
import tempfile

import triton

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "kernels"))
os.environ.pop("TRITON_INTERPRET", None)
import test_w4a16_gluon as t  # noqa: E402
from sm90_ptx import sass  # noqa: E402

CUOBJDUMP = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin",
                         "cuobjdump")


def resources(cubin: bytes) -> str:
    """Registers and local memory (spills) of the cubin, by cuobjdump (no GPU to load it)."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([CUOBJDUMP, "-res-usage", f.name], capture_output=True, text=True,
                             check=True).stdout
    regs, local = (re.search(rf"{key}:(\d+)", out).group(1) for key in ("REG", "LOCAL"))
    return f"{regs} | {local}"


built = []
compile_ = triton.compile
triton.compile = lambda *a, **k: built.append(compile_(*a, **k)) or built[-1]

print(f"triton {triton.__version__}")
print("tiles (m, n, stages) | epilogue | registers | local B (spills) | shared B | "
      "SASS: instructions, STS, STSM, LDS, LDSM, BAR, F2FP, HMUL2")
for tiles in [(64, 128, 2), (64, 128, 3), (32, 128, 3), (128, 128, 2)]:
    for staged in (0, 1):
        t._compile_for_sm90(*tiles, 0, 0, probs=1, stage_acc=staged)
        kernel = built[-1]
        code = sass(kernel.asm["cubin"])
        lines = [line for line in code.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", line)]
        counts = [sum(bool(re.search(rf"\b{op}\b", line)) for line in lines)
                  for op in ("STS", "STSM", "LDS", "LDSM", "BAR", "F2FP", "HMUL2")]
        print(f"{tiles} | {'staged' if staged else 'register'} | "
              f"{resources(kernel.asm['cubin'])} | {kernel.metadata.shared} | {len(lines)}, "
              + ", ".join(map(str, counts)))
