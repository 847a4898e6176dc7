"""Writes .gpu/w4g_nomma.py, .gpu/w4g_nounpack.py and .gpu/w4g_neither.py from
kernels/w4a16_gluon.py (run from the repository root): the first without the tile loop's wgmma
(the unpacked operand stays alive as the wgmma waits' dependency; the PTX keeps its 128 lop3),
the second with the unpack's asm replaced by a move (the words go to the wgmma as they are; 0
lop3, 32 wgmma), the third with both (the words, moved, kept alive as the waits' dependency).
Timing only: none computes the product."""
src = open("kernels/w4a16_gluon.py").read().replace("from .", "from qarl_kernels.")
src = src.replace("from qarl_kernels. import numerics", "from qarl_kernels import numerics")
mma = "                acc = warpgroup_mma(a, x_buf, acc, is_async=True)\n"
asm_start = src.index('        asm="""{')
asm_end = src.index('}""",', asm_start) + len('}""",')
assert src.count(mma) == 1
open(".gpu/w4g_nomma.py", "w").write(src.replace(mma, ""))
moved = src[:asm_start] + '        asm="mov.b32 $0, $1;",' + src[asm_end:]
open(".gpu/w4g_nounpack.py", "w").write(moved)
open(".gpu/w4g_neither.py", "w").write(moved.replace(mma, ""))
