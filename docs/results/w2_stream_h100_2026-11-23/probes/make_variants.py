"""Writes timing-only builds of kernels/w4a16_gluon.py into .gpu/ (run from the repository
root). None computes the product; each says what a part of the tile loop costs. The SASS of
each (offline sm_90a compile, nvdisasm) is the check that ptxas kept what it should:
- w4g_nomma: no wgmma; the unpacked operand folded by XOR into registers that reach the
  output, so ptxas keeps the unpack (its lop3, sub and mul: HADD2/HMUL2 128 each, as the rule).
- w4g_nounpack: the unpack's asm replaced by a move: the shifted words go to the wgmma as
  they are (no HADD2/HMUL2; 32 HGMMA).
- w4g_neither: both. ptxas then also drops the words' reads from shared memory: what is left
  is the loads into shared memory, the barriers, counts, x and the epilogue.
- w4g_decoupled: the wgmma reads a fixed operand; ptxas drops the unpack (its result is
  unused), so this is the MMAs without the words' reads or shifts.
- w4g_independent: the wgmma reads a fixed operand and the unpack is folded into the output
  as in w4g_nomma: both run, neither waits on the other (32 HGMMA, 128 HADD2).
- w4g_folded: the rule with the same fold added, the reference for w4g_independent (the same
  instructions, the wgmma reading the unpack's registers).
An earlier w4g_nomma kept the unpack only as the wgmma waits' dependency; ptxas dropped it,
so that build was w4g_neither (its SASS was the same 600 instructions)."""
src = open("kernels/w4a16_gluon.py").read().replace("from .", "from qarl_kernels.")
src = src.replace("from qarl_kernels. import numerics", "from qarl_kernels import numerics")
mma = "                acc = warpgroup_mma(a, x_buf, acc, is_async=True)\n"
zeros = "    in_flight = gl.zeros([BLOCK_N, HALF_K], gl.bfloat16, a_layout)\n"
done = "    acc, acc_up = warpgroup_mma_wait(num_outstanding=0, deps=(acc, acc_up))\n"
asm_start = src.index('        asm="""{')
asm_end = src.index('}""",', asm_start) + len('}""",')
assert src.count(mma) == 1 and src.count(zeros) == 1 and src.count(done) == 1
fold = "                fold = fold ^ a.to(gl.int16, bitcast=True)\n"
keep = ("    row_sums = gl.sum(fold.to(gl.float32), 1)\n"
        "    acc = acc + gl.expand_dims(gl.convert_layout(row_sums, gl.SliceLayout(1, acc_layout)), 1)\n")
open(".gpu/w4g_nomma.py", "w").write(
    src.replace(mma, fold).replace(zeros, zeros + "    fold = gl.zeros([BLOCK_N, HALF_K], gl.int16, a_layout)\n")
    .replace(done, done + keep))
moved = src[:asm_start] + '        asm="mov.b32 $0, $1;",' + src[asm_end:]
open(".gpu/w4g_nounpack.py", "w").write(moved)
open(".gpu/w4g_neither.py", "w").write(moved.replace(mma, ""))
fixed = "                acc = warpgroup_mma(in_flight_0, x_buf, acc, is_async=True)\n"
open(".gpu/w4g_decoupled.py", "w").write(
    src.replace(mma, fixed).replace(zeros, zeros + "    in_flight_0 = in_flight + 1.0\n"))
open(".gpu/w4g_independent.py", "w").write(
    src.replace(mma, fixed + fold).replace(done, done + keep).replace(
        zeros, zeros + "    in_flight_0 = in_flight + 1.0\n"
        "    fold = gl.zeros([BLOCK_N, HALF_K], gl.int16, a_layout)\n"))
open(".gpu/w4g_folded.py", "w").write(
    src.replace(mma, mma + fold).replace(done, done + keep).replace(
        zeros, zeros + "    fold = gl.zeros([BLOCK_N, HALF_K], gl.int16, a_layout)\n"))
