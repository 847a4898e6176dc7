"""Writes .gpu/_w4g_pdl.py: kernels/w4a16_gluon.py with programmatic dependent launch (PDL):
each CTA lets the next kernel launch at once (griddepcontrol.launch_dependents), optionally
prefetches its first tile's weight words into L2 from a racy read of the counts (the weights
are never written by the kernel before it; a wrong guess costs only bandwidth), then waits for
the previous kernel (griddepcontrol.wait) before anything that kernel may write."""
import subprocess
# the kernel as it was before this round (c8b9af4), from the repository root
src = subprocess.run(["git", "show", "c8b9af4:kernels/w4a16_gluon.py"], capture_output=True,
                     text=True, check=True).stdout
src = src.replace("from . import", "from qarl_kernels import").replace("from .", "from qarl_kernels.")
src = src.replace(
    "def _w4a16_gluon_kernel(w_desc, x_desc, x_ptr,",
    "def _w4a16_gluon_kernel(w_desc, w_ptr, x_desc, x_ptr,")
src = src.replace(
    "                        X_ASYNC: gl.constexpr, num_warps: gl.constexpr):\n    \"\"\"N: output",
    "                        X_ASYNC: gl.constexpr, PDL: gl.constexpr, PF_LINES: gl.constexpr,\n"
    "                        num_warps: gl.constexpr):\n    \"\"\"N: output")
hook = '''    tables = expert_tables(counts_ptr, num_experts, BLOCK_M, E_PAD, num_warps)
    n_blocks = gl.cdiv(N, BLOCK_N)'''
assert hook in src
src = src.replace(hook, '''    if PDL:
        if PF_LINES >= 0:  # PF_LINES -1: no explicit trigger (the implicit one at exit)
            gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [],
                                      dtype=gl.int32, is_pure=False, pack=1)
        if PF_LINES > 0:  # racy guess of the first tile: a prefetch only
            g_tables = expert_tables(counts_ptr, num_experts, BLOCK_M, E_PAD, num_warps)
            g_tiles = row_tile_count(g_tables, num_warps) * gl.cdiv(N, BLOCK_N)
            if gl.program_id(0) < g_tiles:
                g_expert, g_start, g_end, g_nb = tile_of(g_tables, gl.program_id(0),
                                                         gl.cdiv(N, BLOCK_N), num_experts,
                                                         BLOCK_M, num_warps)
                pf_layout: gl.constexpr = gl.BlockedLayout([1, 1], [32 // PF_LINES, PF_LINES], [num_warps, 1], [1, 0])
                PARTS_: gl.constexpr = 2 if SWIGLU else 1
                r = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, pf_layout))
                c = gl.arange(0, PF_LINES, layout=gl.SliceLayout(0, pf_layout))
                row = g_expert.to(gl.int64) * (PARTS_ * N) + g_nb * BLOCK_N + r
                addr = (w_ptr + gl.expand_dims(row * (K // 8), 1)
                        + gl.expand_dims(c * 32, 0))
                ok = gl.expand_dims(g_nb * BLOCK_N + r < N, 1) & gl.expand_dims(c * 256 < K, 0)
                gl.inline_asm_elementwise(
                    "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p prefetch.global.L2 [$1]; mov.b32 $0, 0; }",
                    "=r,l,r", [addr, ok.to(gl.int32)], dtype=gl.int32, is_pure=False, pack=1)
        gl.inline_asm_elementwise("griddepcontrol.wait; // $0", "=r", [], dtype=gl.int32,
                                  is_pure=False, pack=1)
''' + hook)
src = src.replace(
    "    _w4a16_gluon_kernel[(grid, )](\n        w_desc, x_desc,",
    "    codes = lane_codes(qweight)\n    _w4a16_gluon_kernel[(grid, )](\n        w_desc, codes, x_desc,")
src = src.replace(
    "                        probs: torch.Tensor = None, x_async: bool = False) -> torch.Tensor:",
    "                        probs: torch.Tensor = None, x_async: bool = False, pdl: bool = False,\n"
    "                        pf_lines: int = 0) -> torch.Tensor:")
src = src.replace(
    "        PERSISTENT=bool(ctas_per_sm), X_ASYNC=x_async, num_warps=4,",
    "        PERSISTENT=bool(ctas_per_sm), X_ASYNC=x_async, PDL=pdl, PF_LINES=pf_lines,\n"
    "        num_warps=4, launch_pdl=pdl,")
assert src.count("PF_LINES=pf_lines") == 1 and "w_desc, codes, x_desc" in src
open(".gpu/_w4g_pdl.py", "w").write(src)
