"""Per-phase peak GPU memory and in-run quantize timing for `python -m megatron_qarl.train`,
and a standalone timing of quantize-and-pack for one Qwen3-30B-A3B layer's experts
(docs/benchmarks_30b_reduced.md).

  python tools/bench_rl_phases.py train [trainer flags...]
  python tools/bench_rl_phases.py quantize [--layers 48]

`train` runs the trainer unchanged except for two wrappers, which add keys to each `train`
record of metrics.jsonl:
- PhaseTimer.phase: `mem/<phase>_peak_gib` (torch.cuda.max_memory_allocated inside the phase,
  peak stats reset at its start), `mem/<phase>_reserved_gib` (max_memory_reserved), and
  `mem/step_start_gib` (allocated at the first phase of the step: params, grads, optimizer
  state; Adam's moments exist from step 2 on);
- weight_cache.quantize_together: `quant/seconds` and `quant/count`, the time of the step's
  re-quantizations of cached weights (a model's caches together at the first read after the
  optimizer step: the scheme's quantizer, which on CUDA reads the experts' masters in place,
  synchronized before and after) and how many weights they re-quantized.
The peaks exclude the CUDA context and allocator overhead outside PyTorch's caching allocator.

`quantize` times one layer's experts (128 x [1536, 2048] fc1 and 128 x [2048, 768] fc2, bf16
masters as under --bf16): QuantizedWeightCache without the CUDA kernels registered (its
reference path: stack + pure-torch W4A16.quantize_weight), the same cache with them registered
(the trainer's path: the fused kernel reading the masters in place), and the fused Triton
kernel on a stacked weight, with and without the torch.stack; each checked bit-identical to the
reference, and projected to --layers layers.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import contextmanager

import torch


def _sync():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        return True
    return False


def patch_trainer():
    from megatron_qarl.layers import weight_cache
    from megatron_qarl.trainer.metrics import PhaseTimer

    quant = {"seconds": 0.0, "count": 0}
    orig_init, orig_phase, orig_metrics = PhaseTimer.__init__, PhaseTimer.phase, PhaseTimer.metrics
    orig_together = weight_cache.quantize_together

    def init(self):
        orig_init(self)
        self.mem = {}
        quant.update(seconds=0.0, count=0)

    @contextmanager
    def phase(self, name):
        cuda = _sync()
        if cuda:
            self.mem.setdefault("mem/step_start_gib", torch.cuda.memory_allocated() / 2**30)
            torch.cuda.reset_peak_memory_stats()
        with orig_phase(self, name):
            yield
        if cuda:
            for key, value in ((f"mem/{name}_peak_gib", torch.cuda.max_memory_allocated()),
                               (f"mem/{name}_reserved_gib", torch.cuda.max_memory_reserved())):
                self.mem[key] = max(self.mem.get(key, 0.0), value / 2**30)

    def metrics(self):
        return {**orig_metrics(self), **self.mem, "quant/seconds": quant["seconds"],
                "quant/count": quant["count"]}

    def quantize_together(caches):
        stale = sum(not cache.is_fresh() for cache in caches)
        _sync()
        start = time.perf_counter()
        orig_together(caches)
        _sync()
        quant["seconds"] += time.perf_counter() - start
        quant["count"] += stale

    PhaseTimer.__init__, PhaseTimer.phase, PhaseTimer.metrics = init, phase, metrics
    weight_cache.quantize_together = quantize_together


def _median_s(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return median(times)


def median(times: list[float]) -> float:
    """The middle repeat (the upper one of an even count): one slow repeat would drag a mean."""
    return sorted(times)[len(times) // 2]


def project(timings: dict[str, dict], layers: int) -> tuple[dict, dict]:
    """One layer's ms (its fc1 and fc2 summed) and the model's: the layers' experts are alike."""
    totals = {key: sum(timing[key] for timing in timings.values()) for key in
              ("reference_path_ms", "trainer_path_ms", "fused_kernel_ms",
               "fused_kernel_with_stack_ms")}
    return totals, {k: v * layers for k, v in totals.items()}


def bench_quantize(layers: int, repeats: int) -> dict:
    """The reference path is timed first, for both weights, with no CUDA kernel registered;
    registering them (as the trainer does at start) then switches the same caches to the
    trainer's path: quant.ops.quantize_weight, the fused kernel reading the masters in place."""
    from megatron_qarl.layers.weight_cache import QuantizedWeightCache
    from megatron_qarl.quant import get_scheme
    from qarl_kernels.register import register_cuda_kernels
    from qarl_kernels.w4a16_quantize import w4a16_quantize

    scheme = get_scheme("w4a16")
    experts, ffn, hidden = 128, 768, 2048
    result = {"scheme": scheme.name, "device": torch.cuda.get_device_name(), "layers": layers}
    caches, want = {}, {}
    for label, shape in (("fc1", (2 * ffn, hidden)), ("fc2", (hidden, ffn))):
        masters = [torch.nn.Parameter(0.02 * torch.randn(shape, device="cuda",
                                                         dtype=torch.bfloat16))
                   for _ in range(experts)]
        caches[label] = QuantizedWeightCache(scheme, masters, f"experts.linear_{label}",
                                             stacked=True)
        want[label] = _refresh(caches[label])
        result[label] = {"shape": [experts, *shape], "reference_path_ms":
                         _median_s(lambda c=caches[label]: _refresh(c), repeats) * 1e3}
    register_cuda_kernels()
    for label, cache in caches.items():
        stacked = torch.stack(cache.masters).detach()
        for path, got in (("trainer path", _refresh(cache)),
                          ("fused kernel", w4a16_quantize(stacked, scheme))):
            if not (torch.equal(got.data, want[label].data)
                    and torch.equal(got.scale, want[label].scale)):
                raise AssertionError(f"{label}: the {path} and the reference path differ")
        result[label].update({
            "trainer_path_ms": _median_s(lambda: _refresh(cache), repeats) * 1e3,
            "fused_kernel_ms": _median_s(lambda: w4a16_quantize(stacked, scheme), repeats) * 1e3,
            "fused_kernel_with_stack_ms": _median_s(
                lambda: w4a16_quantize(torch.stack(cache.masters).detach(), scheme),
                repeats) * 1e3})
        del stacked
    result["one_layer"], result[f"projected_{layers}_layers"] = project(
        {label: result[label] for label in caches}, layers)
    result["bit_identical"] = True
    return result


def _refresh(cache):
    cache.invalidate()
    return cache.get()


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return
    if not argv or argv[0] not in ("train", "quantize"):
        sys.exit(f"{__doc__}\nerror: the first argument is train or quantize")
    if argv[0] == "train":
        patch_trainer()
        from megatron_qarl.train import main as train_main

        train_main(argv[1:])
        return
    p = argparse.ArgumentParser(prog="bench_rl_phases.py quantize")
    p.add_argument("--layers", type=int, default=48)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--json", default=None, help="also write the result here")
    args = p.parse_args(argv[1:])
    if not torch.cuda.is_available():
        p.error("quantize times the CUDA kernels: run it on a GPU machine")
    result = bench_quantize(args.layers, args.repeats)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
