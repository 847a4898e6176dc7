"""Session 41, call 6: tools/bench_megatron_layers.py with the W4A16 grouped op as committed
("ws": the WS kernel from 256 rows per expert; this model runs 512) or with the WS kernel's
routing turned off ("no-ws": dequantize + _grouped_mm there, as before round 37), counting the
WS kernel's calls. Usage: call6_layers.py ws|no-ws ARGS... (the tool's arguments)."""
import atexit
import runpy
import sys

from qarl_kernels import w4a16_gemm

mode, sys.argv = sys.argv[1], ["tools/bench_megatron_layers.py"] + sys.argv[2:]
if mode == "no-ws":
    w4a16_gemm.WS_ROWS_PER_EXPERT, w4a16_gemm.WS_MANY_ROWS = range(0), 1 << 62
calls = []
kernel = w4a16_gemm.w4a16_grouped_ws
w4a16_gemm.w4a16_grouped_ws = lambda *a, **kw: calls.append(a[0].shape[0]) or kernel(*a, **kw)
atexit.register(lambda: print(f"{mode}: {len(calls)} WS kernel calls, rows "
                              f"{sorted(set(calls))[:8]}", flush=True))
runpy.run_path("tools/bench_megatron_layers.py", run_name="__main__")
