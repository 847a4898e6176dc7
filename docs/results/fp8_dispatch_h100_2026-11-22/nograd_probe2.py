"""No-grad forward (old-logprob pass) of qwen3-moe-200m, FP8 experts+attention through the
kernels: composed experts (old) vs fused SwiGLU vs fused SwiGLU + pre-dispatch quantizer."""
import time, sys, json, torch
import torch.distributed as dist
from megatron.core import parallel_state, tensor_parallel
from megatron_qarl.layers import enable_cuda_kernels
from megatron_qarl.models import build_model, get_preset
from megatron_qarl.quant import FP8Block, W4A16, ops
from qarl_kernels.fp8_quantize import fp8_quantize_packed_rows
from qarl_kernels.fp8_gemm import fp8_swiglu_experts

dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29512", rank=0, world_size=1)
torch.cuda.set_device(0)
parallel_state.initialize_model_parallel()
tensor_parallel.model_parallel_cuda_manual_seed(0)
enable_cuda_kernels()
preset = get_preset("qwen3-moe-200m")
out = {}
for scheme in ("fp8-block",):
    torch.manual_seed(0)
    model = build_model(preset.transformer_config(params_dtype=torch.bfloat16), scheme,
                        targets="experts+attention", cuda_kernels=True, **preset.model_kwargs())
    model.eval()
    for batch, seq in ((16, 1024),):
        tokens = torch.randint(0, preset.vocab_size, (batch, seq), device="cuda")
        pos = torch.arange(seq, device="cuda").expand(batch, seq)
        variants = {"default": None}
        if scheme == "fp8-block":
            variants = {"composed": "composed", "composed again": "composed", "fused-swiglu": "fused", "fused-swiglu again": "fused", "fused+dispatch-quant": "all", "fused+dispatch-quant again": "all"}
        ref = None
        for name, v in variants.items():
            if v == "composed":
                ops.register_swiglu_experts(FP8Block, "cuda", ops.composed_swiglu_experts)
                ops.register_dispatch_quantizer(FP8Block, "cuda", None)
            elif v == "fused":
                ops.register_swiglu_experts(FP8Block, "cuda", fp8_swiglu_experts)
                ops.register_dispatch_quantizer(FP8Block, "cuda", None)
            elif v == "all":
                ops.register_swiglu_experts(FP8Block, "cuda", fp8_swiglu_experts)
                ops.register_dispatch_quantizer(FP8Block, "cuda", fp8_quantize_packed_rows)
            times = []
            with torch.no_grad():
                for i in range(8):
                    torch.cuda.synchronize(); t = time.perf_counter()
                    logits = model(tokens, pos, None)
                    torch.cuda.synchronize(); times.append(time.perf_counter() - t)
            lp = torch.log_softmax(logits.float(), -1).amax(-1)
            diff = None if ref is None else float((lp - ref).abs().max())
            ref = lp if ref is None else ref
            t = sorted(times[3:])[len(times[3:]) // 2]
            out[f"{scheme}/{name}/{batch}x{seq}"] = dict(forward_s=t, max_logprob_diff=diff)
            print(f"{scheme} {name} {batch}x{seq}: no-grad forward {t*1e3:.1f} ms (median of 5), max |dlogprob| vs first {diff}", flush=True)
    del model; torch.cuda.empty_cache()
json.dump(out, open(sys.argv[1], "w"), indent=1)
