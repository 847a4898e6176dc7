"""(a) dense FP8 as a one-expert WS GEMM vs cuBLAS blockwise scaled_mm (GEMM alone, CUDA graphs);
(b) the WS kernel vs the Triton FP8 grouped kernel below its MIN_ROWS crossover."""
import torch
import torch.nn.functional as F
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation
from qarl_kernels.fp8_grouped_ws import fp8_grouped_ws
from qarl_kernels.fp8_gemm import _launch, _tiles

scheme = get_scheme("fp8-block")
for m, n, k in [(4096, 1536, 2048), (16384, 1536, 2048), (8192, 8192, 8192)]:
    w = torch.randn(n, k, device="cuda")
    qw = scheme.quantize_weight(w)
    q3 = fp8_block_quantize(w[None], scheme)
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    wb = w.bfloat16()
    xq, xs = fp8_quantize_activation(x, pad_rows_to=4)
    ws = F.pad(qw.scale, (0, (-qw.scale.shape[1]) % 4))
    f_cublas = lambda: F.scaled_mm(xq, qw.data.t(), xs, F.ScalingType.BlockWise1x128, ws.t(), F.ScalingType.BlockWise128x128, output_dtype=torch.bfloat16)
    xq1, xs1 = fp8_quantize_activation(x)
    cnt = torch.tensor([m], device="cuda", dtype=torch.int32)
    ref = f_cublas().float()
    line = f"dense {m}x{n}x{k}: bf16 {graph_us([lambda: x @ wb.t()]):.1f} cublas {graph_us([f_cublas]):.1f}"
    for tiles in [(256, 3), (128, 4)]:
        y = fp8_grouped_ws(xq1, xs1, q3, cnt, tiles).float()
        err = ((y - ref).norm() / ref.norm()).item()
        line += f" | ws {tiles} {graph_us([lambda: fp8_grouped_ws(xq1, xs1, q3, cnt, tiles)]):.1f} (rel {err:.1e})"
    print(line, flush=True)

for label, e, n, k, ms in [("W13 EP8", 16, 1536, 2048, (128, 256, 512, 1024)), ("W2 EP8", 16, 2048, 768, (128, 256, 512, 1024)),
                           ("W13 E128", 128, 1536, 2048, (512, 1024, 2048)), ("W2 E128", 128, 2048, 768, (512, 1024, 2048))]:
    master = torch.randn(e, n, k, device="cuda")
    qws = [fp8_block_quantize(master + i, scheme) for i in range(3)]
    for m in ms:
        tpe = route(m, e, 8)
        rows = int(tpe.sum())
        x = torch.randn(rows, k, device="cuda").bfloat16()
        xq, xs = fp8_quantize_activation(x)
        tri = _tiles(rows // e, k)
        same = torch.equal(fp8_grouped_ws(xq, xs, qws[0], tpe), _launch(xq, xs, qws[0], tpe, e, False, *tri))
        t_t = graph_us([lambda q=q: _launch(xq, xs, q, tpe, e, False, *tri) for q in qws])
        line = f"{label} M={m} rows={rows}: triton {tri} {t_t:.1f}"
        for tiles in [(256, 3), (128, 4)]:
            t = graph_us([lambda q=q: fp8_grouped_ws(xq, xs, q, tpe, tiles) for q in qws])
            line += f" | ws {tiles} {t:.1f} ({t_t/t:.2f}x)"
        print(line + ("" if same else " BITS DIFFER"), flush=True)
    del qws
