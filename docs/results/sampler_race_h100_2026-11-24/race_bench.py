import torch, time
from megatron_qarl.quant.ops import reference_race_argmax
from qarl_kernels.race_argmax import race_argmax
dev = "cuda"
print(torch.cuda.get_device_name())
# frequencies, 1e6 draws
scores = torch.tensor([2.0, 1.0, 0.5, -1.0, float("-inf"), 0.0, 1.5, -0.5], device=dev)
g = torch.Generator(device=dev).manual_seed(0)
for vocab_rep in (1, 4096):
    s = scores.repeat(vocab_rep)
    rows = 1_000_000 if vocab_rep == 1 else 2000
    tokens = race_argmax(s.expand(rows, -1).contiguous(), g)
    freq = torch.bincount(tokens % 8, minlength=8).double() / rows
    want = torch.softmax(scores.double(), -1)
    z = ((freq - want.cpu().to(freq.device)).abs() / (want * (1 - want) / rows).sqrt().to(freq.device)).nan_to_num(0)
    print(f"V={s.numel()}, {rows} draws: freq {freq.cpu().numpy().round(4)} want {want.cpu().numpy().round(4)} max |z| {z.max().item():.2f}")

def graph_us(fn, n=20):
    """GPU time a call: n calls captured in one CUDA graph, replayed."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    graph.register_generator_state(g)
    with torch.cuda.graph(graph):
        for _ in range(n):
            fn()
    graph.replay(); torch.cuda.synchronize()
    start, end = torch.cuda.Event(True), torch.cuda.Event(True)
    start.record()
    for _ in range(5):
        graph.replay()
    end.record(); torch.cuda.synchronize()
    return start.elapsed_time(end) / (5 * n) * 1e3

def host_us(fn, n=200):
    """Host time a call, the GPU kept busy so nothing waits on it."""
    fn(); torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    return host

for b in (1, 32, 128, 256, 512, 1024):
    x = torch.randn(b, 151936, device=dev).log_softmax(-1)
    t_ref = graph_us(lambda: reference_race_argmax(x, g))
    t_new = graph_us(lambda: race_argmax(x, g))
    h_ref, h_new = host_us(lambda: reference_race_argmax(x, g)), host_us(lambda: race_argmax(x, g))
    gb = x.numel() * 4 / 1e9
    print(f"B={b:5d} V=151936 GPU time (graph replays): reference {t_ref:7.1f} us, race_argmax "
          f"{t_new:6.1f} us ({gb / (t_new * 1e-6):5.0f} GB/s), {t_ref / t_new:4.1f}x; host a call: "
          f"{h_ref:5.1f} / {h_new:5.1f} us")
