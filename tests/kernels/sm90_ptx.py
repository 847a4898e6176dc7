"""Facts of a Gluon kernel built for sm_90a without a GPU: the compile runs in a child process,
since the tests run Triton's interpreter (tests/conftest.py), which cannot compile for a GPU;
the facts are counts of PTX instructions."""
import json
import os
import re
import subprocess
import sys

PATTERNS = {
    "wgmma": r"wgmma\.mma_async",
    # A from registers: the first operand a register list, not a shared-memory descriptor
    "wgmma_register_a": r"wgmma\.mma_async\S*bf16\.bf16\s+\{[^}]*\},\s*\{",
    "tma_loads": r"cp\.async\.bulk\.tensor\.[23]d\.shared::\w+\.global",
    "tma_stores": r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta",
    "scale_copies": r"cp\.async\.c[ag]\.shared\.global",
    "copy_arrives": r"cp\.async\.mbarrier\.arrive",
    "global_loads": r"ld\.global",
    "atomics": r"atom\.global",
    "lop3": r"lop3\.b32",
    "prmt": r"prmt\.b32",
    "vector_loads": r"ld\.shared\.v4",
    "vector_stores": r"st\.shared\.v4",
    "async_fences": r"fence\.proxy\.async",
}


def ptx_counts(ptx: str, *names: str) -> dict:
    """How often each named instruction (PATTERNS) occurs in the PTX."""
    return {name: len(re.findall(PATTERNS[name], ptx)) for name in names}


def facts_of_child(script: str, *args) -> dict:
    """Run `python script args...` without TRITON_INTERPRET; its last line of output is the
    facts as JSON."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, script] + [str(v) for v in args], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
