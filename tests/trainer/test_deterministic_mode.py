"""--deterministic-mode: the flag reaches torch, Megatron and launched SGLang servers, refuses
a torchrun job whose NCCL_ALGO leaves the reduction order open, and (on a GPU) makes a
top-8 MoE model repeat its gradients and its CUDA-graphed generations bit for bit, and (on 2
GPUs) a TP 2 + EP 2 training run repeat its rollouts and weights."""
import argparse
import multiprocessing
import os

import pytest
import torch
from trainer_runs import NCCL_BF16, TWO_GPUS, checkpoint_tensors, records, train

from megatron_qarl.rollout.sglang.launcher import server_command
from megatron_qarl.trainer.distributed import use_deterministic_algorithms
from megatron_qarl.trainer.flags import build_parser
from megatron_qarl.trainer.models import model_config
from megatron_qarl.trainer.sglang_flags import sglang_config
from megatron_qarl.trainer.validation import FlagError, _determinism


def test_flag_reaches_megatron_and_launched_sglang_servers():
    args = build_parser().parse_args(["--deterministic-mode", "--rollout-engine", "sglang",
                                      "--sglang-model-path", "/ckpt"])
    assert model_config(args, use_cpu_initialization=True)[1].deterministic_mode
    spec = sglang_config(args, dims=None).launch
    assert "--enable-deterministic-inference" in server_command(spec, 0)
    plain = build_parser().parse_args(["--rollout-engine", "sglang", "--sglang-model-path", "/m"])
    assert not model_config(plain, use_cpu_initialization=True)[1].deterministic_mode
    assert "--enable-deterministic-inference" not in server_command(
        sglang_config(plain, dims=None).launch, 0)


def test_torchrun_needs_an_nccl_algo_with_a_fixed_order(monkeypatch):
    args = argparse.Namespace(deterministic_mode=True, device="cuda")
    monkeypatch.delenv("NCCL_ALGO", raising=False)
    with pytest.raises(FlagError, match="--deterministic-mode.*NCCL_ALGO=Ring"):
        _determinism(args, world_size=2)
    monkeypatch.setenv("NCCL_ALGO", "NVLS")
    with pytest.raises(FlagError, match="got 'NVLS'"):
        _determinism(args, world_size=2)
    monkeypatch.setenv("NCCL_ALGO", "Ring")
    _determinism(args, world_size=2)
    monkeypatch.delenv("NCCL_ALGO")
    _determinism(args, world_size=1)  # no NCCL reduction
    _determinism(argparse.Namespace(deterministic_mode=True, device="cpu"), world_size=2)


def test_turns_on_torchs_deterministic_algorithms_with_a_cublas_workspace(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    benchmark = torch.backends.cudnn.benchmark
    try:
        use_deterministic_algorithms()
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        assert not torch.utils.deterministic.fill_uninitialized_memory
    finally:
        torch.use_deterministic_algorithms(False)
        torch.utils.deterministic.fill_uninitialized_memory = True
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = False, benchmark


def _repeat_on_gpu(results, deterministic: bool) -> None:
    """In a fresh process (the flag is process-wide): gradients of one batch and a graphed
    generation, twice each; with the flag, without torch's fill of new tensors (so nothing
    reads memory that differs between the two)."""
    import torch.distributed as dist
    from megatron.core import parallel_state, tensor_parallel

    from megatron_qarl.models import QWEN3_MOE_TINY, build_model
    from megatron_qarl.rollout.base import SamplingParams
    from megatron_qarl.rollout.embedded import EmbeddedEngine
    from megatron_qarl.trainer.distributed import use_deterministic_algorithms

    if deterministic:
        use_deterministic_algorithms()
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(5)
    # top-8 of 16 experts: Megatron's combine would add 8 outputs a token in atomic order
    preset = QWEN3_MOE_TINY.replace(num_experts=16, num_experts_per_tok=8)
    config = preset.transformer_config(tp=1, ep=1, etp=1, params_dtype=torch.bfloat16,
                                       deterministic_mode=deterministic)
    torch.manual_seed(0)
    model = build_model(config, "w4a16", vocab_size=256, max_sequence_length=160)
    tokens = torch.randint(0, 256, (8, 128), device="cuda")
    positions = torch.arange(128, device="cuda").expand(8, -1)
    runs = []
    for _ in range(2):
        model.zero_grad()
        logits = model(tokens, positions, None)
        logits.float().square().mean().backward()
        runs.append([logits.detach().clone()] +
                    [p.grad.clone() for p in model.parameters() if p.grad is not None])
    same_grads = len(runs[0]) > 1 and all(torch.equal(a, b) for a, b in zip(*runs))
    model.eval()
    params = SamplingParams(temperature=1.0, max_new_tokens=24)
    prompts = [[5, 9, 11], [7, 3, 3, 8, 20], [6]] * 4
    samples = []
    for _ in range(2):
        engine = EmbeddedEngine(model, pad_id=0, max_batch=16, seed=7, device="cuda",
                                cuda_graph=True)
        samples.append([(g[0].response_ids, g[0].sampler_logprobs)
                        for g in engine.generate(prompts, params)])
    results.put((same_grads, engine.cuda_graph, samples[0] == samples[1]))
    dist.destroy_process_group()


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="atomics' order varies on a GPU only (run on the GPU machine)")
@pytest.mark.parametrize("deterministic", [True, False])
def test_top8_moe_repeats_graphed_generations_on_gpu_and_gradients_with_the_flag(deterministic):
    """Without the flag too the generations repeat: the MoE combine sums without atomics
    (layers/token_combine.py), and nothing else in a decode step adds in a varying order."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    child = context.Process(target=_repeat_on_gpu, args=(results, deterministic))
    child.start()
    same_grads, graphed, same_samples = results.get(timeout=300)
    child.join(timeout=60)
    assert child.exitcode == 0
    assert graphed and same_samples
    assert same_grads or not deterministic


@TWO_GPUS
def test_two_gpu_runs_repeat_rollouts_and_weights_with_the_flag(tmp_path):
    """Two runs of TP 2 + EP 2 under NCCL with NCCL_ALGO=Ring: warm start, then two RL steps
    (graphed rollouts, old logprobs, Muon updates) give the same rollouts and the same weights
    and optimizer state bit for bit."""
    runs = []
    for name in ("a", "b"):
        save = tmp_path / name
        train("--save", str(save), "--train-iters", "2", "--save-interval", "2",
              "--optimizer", "muon", "--tensor-model-parallel-size", "2", "--sequence-parallel",
              "--expert-model-parallel-size", "2", "--expert-tensor-parallel-size", "1",
              "--rollout-routing-replay", "--deterministic-mode", *NCCL_BF16, nproc=2,
              env={"NCCL_ALGO": "Ring"})
        runs.append(([r["rollout_sha1"] for r in records(save / "metrics.jsonl")],
                     checkpoint_tensors(str(save / "iter_0000002"), tmp_path / f"{name}-pt")))
    (rollouts_a, a), (rollouts_b, b) = runs
    assert len(rollouts_a) == 2 and rollouts_a == rollouts_b
    assert a.keys() == b.keys() and any("momentum_buffer" in k for k in a)
    for key in a:
        assert torch.equal(a[key], b[key]), key
