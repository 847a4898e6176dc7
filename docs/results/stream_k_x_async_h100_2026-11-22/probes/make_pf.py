"""Writes .gpu/_w4g_pf2.py: kernels/w4a16_gluon.py with an L2 prefetch of the weight words PF
blocks ahead of each stage's TMA (one prefetch.global.L2 per row per 128-byte line)."""
s = open("kernels/w4a16_gluon.py").read()
for mod in ("checks", "expert_tiles", "gluon_hopper", "w4a16_lanes"):
    s = s.replace(f"from .{mod}", f"from qarl_kernels.{mod}")
s = s.replace("from . import numerics", "from qarl_kernels import numerics")
def rep(a, b, count=1):
    global s
    assert s.count(a) >= 1, a[:60]
    s = s.replace(a, b) if count == 0 else s.replace(a, b, count)
rep('''           x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, SWIGLU: gl.constexpr,
           X_ASYNC: gl.constexpr, num_warps: gl.constexpr):''', '''           x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, SWIGLU: gl.constexpr,
           X_ASYNC: gl.constexpr, num_warps: gl.constexpr, w_ptr=None, stride_w=0, steps=0,
           PF: gl.constexpr = 0):''')
rep('''    if X_ASYNC:  # only the tile's own token rows; the rest zero-filled, nothing read''', '''    if PF > 0:
        if ((kb + PF) % 2 == 0) & (kb + PF < steps):
            pf_rows = (w_row - n0 + gl.minimum(rows, N - 1)).to(gl.int64)
            pf_ptrs = w_ptr + pf_rows * stride_w + (kb + PF) * WORDS
            gl.inline_asm_elementwise("prefetch.global.L2 [$1];\\n mov.u32 $0, 0;", "=r,l",
                                      [pf_ptrs], dtype=gl.int32, is_pure=False, pack=1)
            if SWIGLU:
                gl.inline_asm_elementwise("prefetch.global.L2 [$1];\\n mov.u32 $0, 0;", "=r,l",
                                          [pf_ptrs + N * stride_w], dtype=gl.int32,
                                          is_pure=False, pack=1)
    if X_ASYNC:  # only the tile's own token rows; the rest zero-filled, nothing read''')
# call sites: append the prefetch args
s = s.replace('''               row_start, row_end, x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, SWIGLU,
               X_ASYNC, num_warps)''', '''               row_start, row_end, x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, SWIGLU,
               X_ASYNC, num_warps, w_ptr, stride_w, steps, PF)''')
s = s.replace('''                               row_start, row_end, x_ptr, stride_xm, s_ptr, N, stride_se,
                               stride_sn, SWIGLU, X_ASYNC, num_warps)''', '''                               row_start, row_end, x_ptr, stride_xm, s_ptr, N, stride_se,
                               stride_sn, SWIGLU, X_ASYNC, num_warps, w_ptr, stride_w, steps, PF)''')
s = s.replace('''                                   s_ptr, N, stride_se, stride_sn, SWIGLU, X_ASYNC, num_warps)''', '''                                   s_ptr, N, stride_se, stride_sn, SWIGLU, X_ASYNC, num_warps,
                                   w_ptr, stride_w, steps, PF)''')
assert s.count("w_ptr, stride_w, steps, PF)") == 3, s.count("w_ptr, stride_w, steps, PF)")
rep('''                        X_ASYNC: gl.constexpr, num_warps: gl.constexpr):
    """N: output columns.''', '''                        X_ASYNC: gl.constexpr, num_warps: gl.constexpr, w_ptr=None,
                        stride_w=0, PF: gl.constexpr = 0):
    """N: output columns.''')
rep('''        PERSISTENT=bool(ctas_per_sm), X_ASYNC=x_async, num_warps=4,''', '''        PERSISTENT=bool(ctas_per_sm), X_ASYNC=x_async, num_warps=4, w_ptr=codes,
        stride_w=codes.stride(0), PF=PF,''')
rep('''    w_desc = _descriptor(lane_codes(qweight).view(num_experts * n, words),''', '''    codes = lane_codes(qweight).view(num_experts * n, words)
    w_desc = _descriptor(lane_codes(qweight).view(num_experts * n, words),''')
rep('''_WORD_LAYOUT = gl.NVMMASharedLayout(''', '''import os
PF = int(os.environ.get("PF", 0))
_WORD_LAYOUT = gl.NVMMASharedLayout(''')
open(".gpu/_w4g_pf2.py", "w").write(s)
