"""Session 42: tools/bench_megatron_layers.py with W4A16's backward grad_input as committed
("ws": the WS kernel below WS_GRAD_ROWS_PER_EXPERT where its tiles fill two waves) or with
that routing off ("no-ws": dequantize + _grouped_mm, as before round 38), counting the
kernel's calls. Usage: layers.py ws|no-ws ARGS... (the tool's arguments)."""
import atexit
import runpy
import sys

from qarl_kernels import moe_backward

mode, sys.argv = sys.argv[1], ["tools/bench_megatron_layers.py"] + sys.argv[2:]
if mode == "no-ws":
    moe_backward.WS_GRAD_ROWS_PER_EXPERT = 0
calls = []
kernel = moe_backward.w4a16_grouped_ws_grad_input
moe_backward.w4a16_grouped_ws_grad_input = \
    lambda *a, **kw: calls.append(tuple(a[0].shape)) or kernel(*a, **kw)
atexit.register(lambda: print(f"{mode}: {len(calls)} WS grad_input calls, shapes "
                              f"{sorted(set(calls))[:8]}", flush=True))
runpy.run_path("tools/bench_megatron_layers.py", run_name="__main__")
