"""Registers and shared memory of sm_90a builds: python regs.py 'a b c ...' ['...']"""
import os, subprocess, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "kernels"))
import triton
import test_w4a16_gluon as t
got = {}
orig = triton.compile
def grab(*a, **k):
    got["k"] = orig(*a, **k)
    return got["k"]
t.triton.compile = grab
tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
for spec in sys.argv[1:]:
    facts = t._compile_for_sm90(*map(int, spec.split()))
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(got["k"].asm["cubin"]); f.flush()
        res = subprocess.run([tool, "-res-usage", f.name], capture_output=True, text=True).stdout
    regs = [l for l in res.splitlines() if "REG" in l]
    print(spec, "| shared", facts["shared"], "|", regs[0].strip()[:80] if regs else res[-200:], flush=True)
