"""Writes .gpu/w4g_nox.py (run from the repository root): kernels/w4a16_gluon.py with no x
loads (no x or tail-row TMA, and the stage barriers expect only the words and scales). Timing
only, wrong numbers: the ceiling of any cut in x traffic, e.g. x shared by a cluster."""
src = open("kernels/w4a16_gluon.py").read().replace("from .", "from qarl_kernels.")
src = src.replace("from qarl_kernels. import numerics", "from qarl_kernels import numerics")
edits = [
    ("    x_bytes: gl.constexpr = 0 if X_ASYNC else x_desc.block_type.nbytes\n",
     "    x_bytes: gl.constexpr = 0\n"),
    ("    tail_bytes: gl.constexpr = nbytes + xt_desc.block_type.nbytes\n",
     "    tail_bytes: gl.constexpr = nbytes\n"),
    ("        tma_load(x_desc, [k0 // HALF_K, x_row, 0], bar, x_bufs.index(stage))\n",
     "        pass\n"),
    ("        tma_load(xt_desc, [k0 // HALF_K, x_row + BLOCK_M, 0], bar, xt_bufs.index(stage),\n"
     "                 pred=with_tail if TAIL_LOADS == 2 else True)\n", "        pass\n"),
]
for old, new in edits:
    assert src.count(old) == 1, old
    src = src.replace(old, new)
open(".gpu/w4g_nox.py", "w").write(src)
