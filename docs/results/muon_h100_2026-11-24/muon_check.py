"""GPU checks for Muon: Megatron 0.16.1 + emerging_optimizers 0.3.0 (the only release) fail;
our orthogonalization and step against emerging_optimizers' own; step times on the
Qwen3-30B-A3B layer's shapes."""
import time, torch, traceback
from megatron_qarl.trainer import muon
from megatron_qarl.trainer.muon import MegatronMuon, orthogonalize

dev = "cuda"
print(torch.cuda.get_device_name(), torch.__version__)
import importlib.metadata as md
print("emerging-optimizers", md.version("emerging-optimizers"), "megatron-core", md.version("megatron-core"))

print("\n== 1. megatron-core 0.16.1's own Muon with emerging_optimizers 0.3.0")
from megatron.core.optimizer import muon as mm
print("HAVE_EMERGING_OPTIMIZERS", mm.HAVE_EMERGING_OPTIMIZERS)
try:
    mm.TensorParallelMuon([torch.nn.Parameter(torch.zeros(4, 4, device=dev))], mode="blockwise")
    print("TensorParallelMuon constructed")
except TypeError as e:
    print("TensorParallelMuon(...):", type(e).__name__, e)
try:
    mm.newton_schulz_tp(torch.randn(4, 4, device=dev), steps=5, coefficient_type="quintic",
                        tp_group=None, partition_dim=None, mode="duplicated")
except TypeError as e:
    print("newton_schulz_tp(..., mode=...):", type(e).__name__, e)

print("\n== 2. orthogonalize against emerging_optimizers' newton_schulz (quintic, 5 steps)")
from emerging_optimizers.orthogonalized_optimizers.muon_utils import newton_schulz
g = torch.Generator(device=dev).manual_seed(0)
for shape in [(1536, 2048), (2048, 768), (5120, 2048), (16, 1536, 2048)]:
    x = torch.randn(*shape, device=dev, generator=g)
    torch.set_float32_matmul_precision("highest")
    exact = newton_schulz(x, 5, "quintic")
    err = (orthogonalize(x, 5, bf16=False) - exact).abs().max().item() / exact.abs().max().item()
    torch.set_float32_matmul_precision("medium")
    ref_bf16 = newton_schulz(x, 5, "quintic")
    ours_bf16 = orthogonalize(x, 5, bf16=True)
    rel = lambda y: ((y - exact).norm() / exact.norm()).item()
    print(f"  {str(shape):18s} fp32: max|ours-ref|/max|ref| {err:.2e};  bf16 iteration, "
          f"||y - fp32 ref|| / ||fp32 ref||: ours {rel(ours_bf16):.2e}, emerging_optimizers "
          f"{rel(ref_bf16):.2e}; max|ours-ref| bf16 {(ours_bf16 - ref_bf16).abs().max().item():.2e}")
torch.set_float32_matmul_precision("highest")

print("\n== 3. one optimizer, 3 steps: MegatronMuon against emerging_optimizers.Muon")
from emerging_optimizers.orthogonalized_optimizers.muon import Muon
for prec, stack in (("highest", muon.STACK_ELEMENTS), ("medium", muon.STACK_ELEMENTS),
                    ("highest", 1), ("medium", 1)):
    muon.STACK_ELEMENTS = stack
    shapes = [(1536, 2048)] * 3 + [(2048, 768)] * 2 + [(128, 2048)]
    a = [torch.nn.Parameter(torch.randn(*s, device=dev, generator=g) * 0.02) for s in shapes]
    b = [torch.nn.Parameter(p.detach().clone()) for p in a]
    ours = MegatronMuon(a, lr=1e-3, momentum_beta=0.95, use_nesterov=False, weight_decay=0.01,
                        fp32_matmul_prec=prec)
    ref = Muon(b, lr=1e-3, momentum=0.95, weight_decay=0.01, nesterov=False,
               weight_decay_method="decoupled", fp32_matmul_prec=prec)
    for _ in range(3):
        for p, q in zip(a, b):
            grad = torch.randn(p.shape, device=dev, generator=g)
            p.grad, q.grad = grad.clone(), grad.clone()
        ours.step(); ref.step()
    diff = max((p - q).abs().max().item() / (q.detach().abs().max().item()) for p, q in zip(a, b))
    upd = max(((p - q).abs().max() / 1e-3).item() for p, q in zip(a, b))
    print(f"  {prec:8s} {'stacked' if stack > 1 else 'one matrix at a time'}: params after 3 steps: max|ours-ref| / max|ref| = {diff:.2e}"
          f"  (= {upd:.2e} of one lr)")

muon.STACK_ELEMENTS = 1 << 26
print("\n== 4. step time, one Qwen3-30B-A3B layer's Muon matrices (fp32 masters)")
def layer_params(experts):
    shapes = [(1536, 2048)] * experts + [(2048, 768)] * experts + [(5120, 2048), (2048, 4096), (128, 2048)]
    return [torch.nn.Parameter(torch.randn(*s, device=dev) * 0.02) for s in shapes]

def time_steps(opt, params, n=5):
    for p in params:
        p.grad = torch.randn_like(p)
    opt.step(); torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        opt.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e3

qkv = dict(split_qkv=True, is_qkv_fn=lambda p: p.shape == (5120, 2048), qkv_split_shapes=(1024, 128, 128))
for experts in (128, 16):
    params = layer_params(experts)
    n = sum(p.numel() for p in params)
    stacked = time_steps(MegatronMuon(params, lr=1e-6, weight_decay=0.01, **qkv), params)
    saved = muon.STACK_ELEMENTS
    muon.STACK_ELEMENTS = 1
    one_by_one = time_steps(MegatronMuon(params, lr=1e-6, weight_decay=0.01, **qkv), params)
    muon.STACK_ELEMENTS = saved
    adam = time_steps(torch.optim.AdamW(params, lr=1e-6, weight_decay=0.01, fused=True), params)
    ref = time_steps(Muon(params, lr=1e-6, weight_decay=0.01), params)
    print(f"  {experts:3d} experts ({n/1e6:.0f}M params): MegatronMuon stacked {stacked:.1f} ms, "
          f"one matrix at a time {one_by_one:.1f} ms, emerging_optimizers.Muon {ref:.1f} ms, "
          f"fused AdamW {adam:.1f} ms; peak {torch.cuda.max_memory_allocated()/2**30:.1f} GiB")
    del params
    torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
