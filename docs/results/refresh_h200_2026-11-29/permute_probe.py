"""Session 48, call 4: the dropless permutation of 4 x 1024 and 32 x 1024 tokens over 128
experts, top-8: Megatron's permute (masked_select), the known count by nonzero_static (main
since this session) and by a stable argsort (refresh_ab.argsort_known_count): same rows, probs
and indices; each call's time to completion (do_bench, so Megatron's includes its host syncs);
whether a call syncs (sync debug mode "error") and whether a CUDA graph captures the sync-free
ones."""
import sys

import torch
import triton
from megatron.core.transformer.moe.moe_utils import permute

sys.path.insert(0, "docs/results/refresh_h200_2026-11-29")
from megatron_qarl.layers.token_dispatch import permute_known_count  # noqa: E402
from refresh_ab import argsort_known_count  # noqa: E402


def main():
    print(torch.cuda.get_device_name(), flush=True)
    for tokens in (4096, 32768):
        experts, k, count = 128, 8, tokens * 8
        chosen = torch.randn(tokens, experts, device="cuda").topk(k, dim=-1).indices
        routing_map = torch.zeros(tokens, experts, dtype=torch.bool,
                                  device="cuda").scatter_(1, chosen, True)
        probs = torch.rand(tokens, experts, device="cuda")
        x = torch.randn(tokens, 2048, device="cuda", dtype=torch.bfloat16)
        want = permute(x, routing_map, probs=probs, num_out_tokens=count)
        for name, fn in [("Megatron masked_select", lambda: permute(
                              x, routing_map, probs=probs, num_out_tokens=count)),
                         ("nonzero_static", lambda: permute_known_count(
                             x, routing_map, probs, count)),
                         ("argsort", lambda: argsort_known_count(x, routing_map, probs, count))]:
            assert all(torch.equal(w, g) for w, g in zip(want, fn())), name
            us = triton.testing.do_bench(fn, rep=200) * 1e3
            torch.cuda.set_sync_debug_mode("error")
            try:
                fn()
                syncs = "no sync"
            except RuntimeError:
                syncs = "syncs"
            torch.cuda.set_sync_debug_mode("default")
            if syncs == "syncs":  # a capture would fail; not tried
                print(f"{tokens} tokens, {name}: {us:.1f} us, {syncs}", flush=True)
                continue
            try:
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    out = fn()
                graph.replay()
                torch.cuda.synchronize()
                captured = "captured" if all(torch.equal(w, g) for w, g in zip(want, out)) \
                    else "captured, wrong"
            except Exception as err:  # noqa: BLE001 - report what capture raised
                captured = f"not captured ({type(err).__name__})"
            print(f"{tokens} tokens, {name}: {us:.1f} us, {syncs}, {captured}", flush=True)


if __name__ == "__main__":
    main()
