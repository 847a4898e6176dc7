"""Writes the two probe modules sk_probe.py and nox_probe.py import, from kernels/w4a16_gluon.py
at c272b4b with stream_k.patch applied (git apply): _w4g_sk.py (FIXUP env/global: 0 partial
tiles stored as if whole, 1 shares written but never summed, 2 the full fix-up) and _w4g_nox.py
(X_ON=0: no x loads at all, the wgmmas read stale shared memory). Run from the repository root;
both land in .gpu/, which the probes put on sys.path."""
s = open("kernels/w4a16_gluon.py").read()
for mod in ("checks", "expert_tiles", "gluon_hopper", "w4a16_lanes"):
    s = s.replace(f"from .{mod}", f"from qarl_kernels.{mod}")
s = s.replace("from . import numerics", "from qarl_kernels import numerics")
s = s.replace("STREAM_K: gl.constexpr, num_warps: gl.constexpr):",
              "STREAM_K: gl.constexpr, num_warps: gl.constexpr, FIXUP: gl.constexpr = 2):", 1)
s = s.replace('''            if (kb_lo > 0) | (kb_hi < steps):
                acc, emit = _fix_up(''', '''            if FIXUP == 0:
                emit = kb_hi == steps
            elif FIXUP == 1:
                emit = kb_hi < 0
            elif (kb_lo > 0) | (kb_hi < steps):
                acc, emit = _fix_up(''')
s = s.replace("STREAM_K=stream_k, num_warps=4,", "STREAM_K=stream_k, num_warps=4, FIXUP=FIXUP,")
s = s.replace("_LOCKS = {}", "import os\nFIXUP = int(os.environ.get('FIXUP', 2))\n_LOCKS = {}")
open(".gpu/_w4g_sk.py", "w").write(s)

s = s.replace('''    mbarrier.expect(bar, parts * w_desc.block_type.nbytes + 2 * x_desc.block_type.nbytes)
    tma_load(w_desc, [w_row, kb * WORDS], bar, w_bufs.index(parts * stage))
    if SWIGLU:
        tma_load(w_desc, [w_row + N, kb * WORDS], bar, w_bufs.index(parts * stage + 1))
    tma_load(x_desc, [x_row, kb * BLOCK_K], bar, x_bufs.index(2 * stage))
    tma_load(x_desc, [x_row, kb * BLOCK_K + HALF_K], bar, x_bufs.index(2 * stage + 1))''',
              '''    mbarrier.expect(bar, parts * w_desc.block_type.nbytes + 2 * x_desc.block_type.nbytes * X_ON)
    tma_load(w_desc, [w_row, kb * WORDS], bar, w_bufs.index(parts * stage))
    if SWIGLU:
        tma_load(w_desc, [w_row + N, kb * WORDS], bar, w_bufs.index(parts * stage + 1))
    if X_ON:
        tma_load(x_desc, [x_row, kb * BLOCK_K], bar, x_bufs.index(2 * stage))
        tma_load(x_desc, [x_row, kb * BLOCK_K + HALF_K], bar, x_bufs.index(2 * stage + 1))''')
s = s.replace("FIXUP = int(os.environ.get('FIXUP', 2))",
              "FIXUP = int(os.environ.get('FIXUP', 2))\nX_ON = gl.constexpr(int(os.environ.get('X_ON', 1)))")
open(".gpu/_w4g_nox.py", "w").write(s)
