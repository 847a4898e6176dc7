"""Facts of a Gluon kernel built for sm_90a without a GPU: the compile runs in a child process,
since the tests run Triton's interpreter (tests/conftest.py), which cannot compile for a GPU;
the facts are counts of PTX instructions. One child per test file serves all its compiles."""
import atexit
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import traceback

import triton

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


def sass(cubin: bytes) -> str:
    """A cubin's SASS, by the nvdisasm that ships with Triton beside ptxas."""
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([tool, "-c", f.name], capture_output=True, text=True,
                              check=True).stdout


#: a wgmma in SASS: HGMMA (bf16), QGMMA (FP8), IGMMA (int8) .64xNxK.F32/S32... Rd, ...; its
#: 32-bit accumulator is Rd.. (N / 2 registers a thread); `gsb0` on the last one of a group
_GMMA = re.compile(r"[HQI]GMMA\.64x(\d+)x\d+\.[FS]32\S*\s+R(\d+)\b.*?(gsb0)?$")
_DEPBAR = re.compile(r"WARPGROUP\.DEPBAR\.LE\s+gsb0,\s*(0x[0-9a-f]+)")


def sass_wgmmas(sass_text: str) -> int:
    """How many wgmmas the SASS holds (the lines pending_accumulator_reads tracks)."""
    return sum(bool(_GMMA.search(line.split(";", 1)[0])) for line in sass_text.splitlines())


def pending_accumulator_reads(sass_text: str) -> list:
    """Instructions, in layout order, that touch a wgmma accumulator register before the wait
    that retires its group (`WARPGROUP.DEPBAR.LE gsb0, N` leaves the N youngest groups in
    flight): undefined on the GPU. ptxas has hoisted bf16 packs of the accumulator above the
    last wait in a persistent build, which then stored partial sums (session 70). Layout order
    stands in for control flow: a loop's body reads in it as its first iteration does."""
    groups, open_group, found = [], set(), []
    for line in sass_text.splitlines():
        ins = line.split("*/", 1)[-1].split(";", 1)[0].strip()
        hgmma = _GMMA.search(ins)
        if hgmma:
            base = int(hgmma.group(2))
            open_group |= set(range(base, base + int(hgmma.group(1)) // 2))
            if hgmma.group(3):
                groups.append(open_group)
                open_group = set()
            continue
        depbar = _DEPBAR.search(ins)
        if depbar:
            keep = int(depbar.group(1), 16)
            groups = groups[len(groups) - keep:] if keep else []
            continue
        pending = set().union(*groups) if groups else set()
        if pending and pending & {int(r) for r in re.findall(r"\bR(\d+)\b", ins)}:
            found.append(ins)
    return found


def sass_facts(sass_text: str) -> dict:
    """The wgmma facts of a build's SASS the compile tests assert."""
    return {"sass_wgmmas": sass_wgmmas(sass_text),
            "pending_accumulator_reads": pending_accumulator_reads(sass_text)}


def ptx_counts(ptx: str, *names: str) -> dict:
    """How often each named instruction (PATTERNS) occurs in the PTX."""
    return {name: len(re.findall(PATTERNS[name], ptx)) for name in names}


#: a reply's first word on the child's stdout (the compiler may print too)
REPLY = "SM90-FACTS"
#: the compile child of each test file, kept for the file's other tests: starting Python with
#: torch and Triton took 3-4 s of each of the 40 compiles of test_w4a16_gluon.py
_CHILDREN = {}


def facts_of_child(script: str, *args) -> dict:
    """The facts `script`'s build function gives for args, computed in a child process without
    TRITON_INTERPRET (serve_facts in the script's __main__), one child per script."""
    child = _CHILDREN.get(script)
    if child is None or child.process.poll() is not None:
        child = _CHILDREN[script] = _Child(script)
    return child.ask([str(v) for v in args])


class _Child:
    def __init__(self, script: str):
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([sys.executable, script], env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr)
        self.replies = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        atexit.register(self.process.stdin.close)

    def _read(self):
        for line in self.process.stdout:
            if line.startswith(REPLY):
                self.replies.put(line[len(REPLY):])
        self.replies.put(None)  # the child ended

    def ask(self, args: list) -> dict:
        self.process.stdin.write(json.dumps(args) + "\n")
        self.process.stdin.flush()
        reply = self.replies.get(timeout=300)
        if reply is None:
            self.stderr.seek(0)
            raise AssertionError(self.stderr.read()[-3000:])
        facts = json.loads(reply)
        assert "error" not in facts, facts.get("error")
        return facts


def serve_facts(build) -> None:
    """A test file's __main__: answer each line of arguments (a JSON list of strings) on stdin
    with REPLY and build(*ints)'s facts as JSON, or the error's traceback, until stdin ends."""
    for line in sys.stdin:
        try:
            facts = build(*(int(v) for v in json.loads(line)))
        except Exception:  # noqa: BLE001 - the test that asked fails with it
            facts = {"error": traceback.format_exc()[-3000:]}
        print(REPLY + json.dumps(facts), flush=True)
