"""End to end on CPU: a short QaRL-TBPO W4A16 run, launch scripts, users' rewards and the
failures a user meets first (bad flags, a malformed dataset row). Resume: test_resume.py;
2 processes: test_parallel_training.py."""
import json
import math
import os
import subprocess
import sys

import pytest
import torch
from trainer_runs import NCCL_BF16, TINY, TWO_GPUS, checkpoint_tensors, records, train

from megatron_qarl.train import main
from megatron_qarl.trainer.distributed import shutdown_distributed


@pytest.fixture(autouse=True)
def no_parallel_state_left_by_earlier_tests():
    """main() sets up Megatron's parallel state as in a fresh process; a test run before on the
    same xdist worker may have left its own (compat.cpu_testing.init_parallel re-initializes,
    the trainer refuses to: "data parallel group is already initialized")."""
    shutdown_distributed()


def test_smoke_run_trains_and_writes_metrics(tmp_path):
    save = tmp_path / "run"
    proc = train("--save", str(save), "--train-iters", "2", "--save-interval", "1")
    assert "reward (greedy" in proc.stdout and str(save) in proc.stdout
    steps = records(save / "metrics.jsonl")
    assert [r["step"] for r in steps] == [1, 2]
    for r in steps:
        for key in ("pg_loss", "grad_norm", "reward_mean", "response_length_mean",
                    "mismatch_abs_log_w_token", "mismatch_k3_kl", "error_resp_frac",
                    "time/rollout", "time/old_logprobs", "time/train", "time/publish",
                    "tokens_per_s", "entropy"):
            assert isinstance(r[key], float) and math.isfinite(r[key]), key
        assert 0 < r["entropy"] <= math.log(128)  # the char tokenizer's padded vocabulary
    assert records(save / "metrics.jsonl", "summary")
    after_sft = checkpoint_tensors(str(save / "iter_0000000"), tmp_path)
    final = checkpoint_tensors(str(save / "iter_0000002"), tmp_path)
    changed = [k for k, v in after_sft.items() if k.startswith(("embedding", "decoder"))
               and not torch.equal(v, final[k])]
    assert len(changed) >= 8, changed
    assert any("experts" in k for k in changed)  # the W4A16 experts' masters trained by STE
    # the save carries its HF config: the export tools read it with no --hf-config
    with open(save / "iter_0000002" / "hf_assets" / "config.json") as f:
        assert json.load(f)["vocab_size"] == final["embedding.word_embeddings.weight"].shape[0]
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "checkpoint.py")
    export = subprocess.run([sys.executable, tool, "export", str(save), str(tmp_path / "w4"),
                             "--scheme", "w4a16"], capture_output=True, text=True, timeout=120)
    assert export.returncode == 0, export.stderr[-2000:]
    assert f"reading {save / 'iter_0000002'}" in export.stderr


EP2 = ["--expert-model-parallel-size", "2"]


@pytest.mark.parametrize("flags,nproc", [
    pytest.param([], 1, id="one-process"),
    pytest.param(EP2, 2, id="ep2-gloo"),
    pytest.param(EP2 + NCCL_BF16, 2, id="ep2-nccl-bf16", marks=TWO_GPUS),
])
def test_bf16_baseline_with_grouped_experts_trains(tmp_path, flags, nproc):
    """--moe-grouped-gemm: the bf16 learner's experts as grouped GEMMs (tests/megatron/
    test_grouped_bf16_experts.py checks them against SequentialMLP), also with each rank's
    half of the experts under EP 2; the engine decodes with the same model, so sampler and
    learner agree."""
    save = tmp_path / "run"
    train("--save", str(save), "--train-iters", "1", "--save-interval", "1",
          "--rollout-quant", "none", "--loss", "grpo", "--moe-grouped-gemm", *flags,
          nproc=nproc)
    (step,) = records(save / "metrics.jsonl")
    assert math.isfinite(step["pg_loss"]) and step["grad_norm"] > 0
    assert step["mismatch_abs_log_w_token"] < 1e-5
    before = checkpoint_tensors(str(save / "iter_0000000"), tmp_path)
    after = checkpoint_tensors(str(save / "iter_0000001"), tmp_path)
    assert any(not torch.equal(v, after[k]) for k, v in before.items() if "experts" in k)


def test_a_users_reward_scores_rollouts_and_sampled_evaluations(tmp_path):
    """The reward counts its calls: one RL step of 4 prompts x 4 samples, and the evaluations
    before and after RL of 8 held-out prompts x 2 samples each."""
    calls = tmp_path / "calls.txt"
    (tmp_path / "quarter_reward.py").write_text(
        "def score(response, answer):\n"
        f"    open({str(calls)!r}, 'a').write('.')\n"
        "    return 0.25\n")
    save = tmp_path / "run"
    proc = train("--save", str(save), "--train-iters", "1", "--reward", "quarter_reward:score",
                 "--eval-temperature", "0.6", "--eval-samples-per-prompt", "2",
                 pythonpath=str(tmp_path))
    (step,) = records(save / "metrics.jsonl")
    assert step["reward_mean"] == 0.25  # the built-in arithmetic reward gives 0 or 1 a sample
    assert len(calls.read_text()) == 4 * 4 + 2 * 8 * 2
    assert ("reward (temperature 0.6, top-p 1, mean of 2 samples, 8 held-out prompts): "
            "before RL 0.250 -> after 0.250") in proc.stdout


def _launch_script(tmp_path, body: str) -> subprocess.CompletedProcess:
    script = tmp_path / "launch.py"
    script.write_text("from megatron_qarl.train import main\n" + body)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, str(script), *TINY, "--save", str(tmp_path / "run"),
                           "--train-iters", "1"], capture_output=True, text=True, env=env,
                          timeout=240)


def test_an_unguarded_launch_script_is_refused_before_any_work(tmp_path):
    """Megatron's checkpoint writer spawns a helper that re-imports the launch script; an
    unguarded main() there used to start a second trainer and hang the run at its first save."""
    run = _launch_script(tmp_path, "main()\n")
    assert run.returncode == 2, run.stderr[-2000:]
    assert "Call main() under `if __name__ == \"__main__\":`" in run.stderr
    assert not (tmp_path / "run").exists()


def test_a_guarded_launch_script_trains_and_saves(tmp_path):
    run = _launch_script(tmp_path, "if __name__ == '__main__':\n    main()\n")
    assert run.returncode == 0, run.stderr[-2000:]
    assert [r["step"] for r in records(tmp_path / "run" / "metrics.jsonl")] == [1]


def test_sdpa_attention_backend_keeps_sampler_and_learner_aligned(tmp_path):
    save = tmp_path / "run"
    train("--save", str(save), "--train-iters", "1", "--attention-backend", "sdpa")
    (step,) = records(save / "metrics.jsonl")
    assert step["mismatch_abs_log_w_token"] < 1e-5  # the engine's windows masked as learned


def test_help_does_not_import_megatron_core():
    """--help answers from the parser alone (2.8 s on the 2-core dev machine against 7.9 s when
    every flag module pulled in megatron-core through the checkpoint package)."""
    code = ("import sys\n"
            "from megatron_qarl.train import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('megatron.core' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert "--rollout-routing-replay" in run.stdout
    assert run.stdout.strip().splitlines()[-1] == "False", run.stdout[-300:]


@pytest.mark.parametrize("flags, message", [
    (["--global-batch-size", "5"], "--global-batch-size 5 must divide the 16 responses"),
    (["--n-samples-per-prompt", "1", "--global-batch-size", "4"],
     "--n-samples-per-prompt must be >= 2"),
    (["--rollout-max-new-tokens", "16"], "--rollout-max-new-tokens 16 leaves no room"),
    (["--tensor-model-parallel-size", "2"], "--tensor-model-parallel-size 2 does not divide"),
    (["--loss", "tbpo", "--mismatch-correction", "tis"], "cannot be combined with --loss tbpo"),
    (["--neg-seq-clip-ratio-low", "1.5"], "--neg-seq-clip-ratio-low must be in [0, 1)"),
    (["--rollout-top-p", "0"], "--rollout-top-p must be in (0, 1]"),
    (["--rollout-top-k", "1"], "--rollout-top-k 1 samples greedily"),
    (["--muon-momentum", "1"], "--muon-momentum must be in [0, 1)"),
    (["--muon-num-ns-steps", "0"], "--muon-num-ns-steps must be >= 1"),
    (["--muon-extra-scale-factor", "0"], "--muon-extra-scale-factor must be > 0"),
    (["--prompt-template", "no placeholder"], "--prompt-template 'no placeholder'"),
    (["--load", "/nonexistent"], "--load '/nonexistent' holds no checkpoint"),
    (["--prompt-data", __file__, "--eval-interval", "2"],
     "--eval-interval 2 needs held-out prompts: give --eval-prompt-data FILE"),
    (["--tokenizer-model", "/tmp"], "is read by --tokenizer-type hf only"),
    (["--num-layers", "0"], "--num-layers must be >= 1, got 0"),
    (["--num-experts", "1"], "--num-experts 1 is below the qwen3-moe-tiny router's top-k 2"),
    (["--pretrained-checkpoint", "/nonexistent"],
     "--pretrained-checkpoint '/nonexistent' is not a Megatron checkpoint"),
    (["--reward", "no_such_module:score"], "--reward 'no_such_module:score': cannot import"),
    (["--eval-samples-per-prompt", "4"], "--eval-samples-per-prompt 4 with greedy decoding"),
    (["--eval-temperature", "0.6", "--eval-top-p", "1.5"], "--eval-top-p must be in (0, 1]"),
    (["--use-distributed-optimizer"], "--use-distributed-optimizer with Adam needs CUDA"),
    (["--bf16"], "--bf16 needs CUDA"),
    (["--rollout-quant", "none", "--quant-targets", "experts+attention"],
     "--quant-targets experts+attention with --rollout-quant none quantizes nothing"),
    (["--moe-aux-loss-coeff", "-0.1"], "--moe-aux-loss-coeff must be >= 0"),
    (["--distributed-timeout-minutes", "0"], "--distributed-timeout-minutes must be > 0"),
    (["--logprob-max-tokens-per-micro-batch", "8"],
     "--logprob-max-tokens-per-micro-batch 8 is below --seq-length"),
    (["--quant-keep-operand", "--rollout-quant", "fp8-block"],
     "--quant-keep-operand keeps the W4A16 experts' dequantized operand, but the learner runs "
     "'fp8-block'"),
    (["--quant-keep-operand", "--no-aligned-learner"], "the learner runs 'none' (--rollout-quant "
     "w4a16, --no-aligned-learner)"),
    # review, session 74: each of these ran into a traceback, or ran and saved nothing
    (["--save", ""], "--save is empty: give a path"),  # "$SAVE" of an unset variable
    (["--metrics-path", ""], "--metrics-path is empty"),
    (["--metrics-path", os.path.dirname(__file__)], "is a directory; give a file, e.g."),
    (["--sequence-parallel"], "--sequence-parallel splits the sequence over tensor-parallel"),
    (["--prompt-data", "synthetic:gsm8k"], "--prompt-data 'synthetic:gsm8k': no such synthetic "
     "task; the tasks are synthetic:arithmetic"),
    (["--eval-top-p", "0.5"], "--eval-top-p 0.5 with greedy decoding changes nothing"),
    (["--wandb-exp-name", "x"], "--wandb-exp-name names a wandb run, but nothing logs to wandb"),
    (["--loss", "tbpo", "--clip-ratio-low", "0.5"], "--clip-ratio-low 0.5 is read by grpo / "
     "dapo / dual_clip only, not by --loss tbpo"),
])
def test_bad_flags_fail_before_any_work(tmp_path, capsys, flags, message):
    save = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        main([*TINY, "--save", str(save), *flags])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not save.exists()  # nothing started, nothing written


def test_load_without_save_and_experts_over_ep_ranks_are_flag_errors(tmp_path, capsys,
                                                                      monkeypatch):
    """--load without --save raised a TypeError in the flag checks, and experts that do not
    split over the EP ranks a ValueError traceback from every rank of a bf16 run."""
    metrics = str(tmp_path / "m.jsonl")
    with pytest.raises(SystemExit) as exit_info:
        main([*TINY, "--metrics-path", metrics, "--load", str(tmp_path / "none")])
    assert exit_info.value.code == 2
    assert "holds no checkpoint" in capsys.readouterr().err
    monkeypatch.setenv("WORLD_SIZE", "2")  # as torchrun --nproc-per-node 2 sets it
    with pytest.raises(SystemExit) as exit_info:
        main([*TINY, "--metrics-path", metrics, "--rollout-quant", "none", "--num-experts", "3",
              "--expert-model-parallel-size", "2"])
    assert exit_info.value.code == 2
    assert "3 experts cannot be split evenly over --expert-model-parallel-size 2" in \
        capsys.readouterr().err


def test_a_save_folder_of_another_run_is_not_overwritten(tmp_path, capsys):
    """Without --load of it, a run replaced the folder's checkpoints step by step and mixed
    its metrics into the other run's (a review): refused, every byte left as it was."""
    save, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    for folder in (save, elsewhere):
        (folder / "iter_0000003").mkdir(parents=True)
        (folder / "latest_checkpointed_iteration.txt").write_text("3")
    for flags in ([], ["--load", str(elsewhere)]):
        with pytest.raises(SystemExit) as exit_info:
            main([*TINY, "--save", str(save), *flags])
        assert exit_info.value.code == 2
        assert f"--save '{save}' holds another run's checkpoints (steps 3); resume it with " \
               f"--load '{save}', or give a new --save folder" in capsys.readouterr().err
    assert sorted(p.name for p in save.iterdir()) == ["iter_0000003",
                                                       "latest_checkpointed_iteration.txt"]


def test_load_of_one_checkpoint_names_its_folder_and_step(tmp_path, capsys):
    (tmp_path / "run" / "iter_0000004").mkdir(parents=True)
    with pytest.raises(SystemExit):
        main([*TINY, "--save", str(tmp_path / "new"), "--load",
              str(tmp_path / "run" / "iter_0000004")])
    assert f"is one checkpoint, not a --save folder: --load '{tmp_path / 'run'}' --ckpt-step 4" \
        in capsys.readouterr().err


def test_wandb_logging_without_wandb_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    """It failed with ModuleNotFoundError once the model was built."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "wandb" else real(name, *args))
    with pytest.raises(SystemExit) as exit_info:
        main([*TINY, "--save", str(tmp_path / "run"), "--wandb-project", "qarl"])
    assert exit_info.value.code == 2
    assert "--wandb-project needs the wandb package" in capsys.readouterr().err


def test_malformed_dataset_row_is_named(tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_text(json.dumps({"prompt": "1+2=", "answer": "3"}) + "\n"
                    + json.dumps({"prompt": "4+4="}) + "\n")
    proc = train("--save", str(tmp_path / "run"), "--prompt-data", str(data), check=False)
    assert proc.returncode == 1
    assert f"{data}:2: no field 'answer'" in proc.stderr


def test_a_file_dataset_without_held_out_prompts_says_so(tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"{a}+{a}=", "answer": str(2 * a)}) + "\n"
                            for a in range(10, 26)))
    proc = train("--save", str(tmp_path / "run"), "--prompt-data", str(data),
                 "--train-iters", "1")
    assert "no held-out prompts (--eval-prompt-data), so no held-out reward" in proc.stdout
    assert "nan" not in proc.stdout


def test_layer_wise_muon_without_data_parallel_ranks_is_refused():
    """megatron-core's layer-wise optimizer shards nothing at DP 1 but sums its gradient norm
    over every rank: at TP 2 with experts unsplit (expert-TP 1) they counted twice, and
    saving a checkpoint failed."""
    from megatron_qarl.trainer.flags import build_parser
    from megatron_qarl.trainer.validation import FlagError, _parallel

    argv = ["--optimizer", "muon", "--use-distributed-optimizer",
            "--tensor-model-parallel-size", "2", "--sequence-parallel",
            "--expert-tensor-parallel-size", "1"]
    with pytest.raises(FlagError, match="counts their gradients 2 times; drop it"):
        _parallel(build_parser().parse_args(argv), world_size=2)
    assert _parallel(build_parser().parse_args(argv), world_size=4) == 2
    # one process, or experts split over the TP ranks: nothing replicated, nothing refused
    assert _parallel(build_parser().parse_args(argv[:2]), world_size=1) == 1
    split = argv[:-1] + ["2"]
    assert _parallel(build_parser().parse_args(split), world_size=2) == 1


@pytest.mark.parametrize("flags, refused", [
    (["--rollout-quant", "w4a16"], True),  # the aligned learner and the engine
    (["--rollout-quant", "w4a16-g32", "--no-aligned-learner"], True),  # the engine
    (["--rollout-quant", "w4a16", "--bf16"], False),
    (["--rollout-quant", "fp8-block"], False),  # its kernels quantize fp32 activations too
])
def test_w4a16_on_cuda_without_bf16_is_refused(flags, refused):
    """The W4A16 kernels raised on the fp32 activations of a --device cuda run without --bf16,
    inside the first forward."""
    from megatron_qarl.trainer.flags import build_parser
    from megatron_qarl.trainer.validation import FlagError, _quant

    args = build_parser().parse_args(["--device", "cuda", *flags])
    args.learner_quant = args.rollout_quant if args.aligned_learner else "none"
    if refused:
        with pytest.raises(FlagError, match="on CUDA needs --bf16"):
            _quant(args)
    else:
        _quant(args)


@pytest.mark.parametrize("sft, says", [("2", "warm start only:"), ("0", "no RL steps:")])
def test_zero_rl_steps_say_what_was_evaluated(tmp_path, capsys, sft, says):
    """--train-iters 0 without a warm start evaluated the initial model and called it the warm
    start's."""
    main([*TINY, "--save", str(tmp_path / "run"), "--train-iters", "0", "--sft-iters", sft,
          "--eval-num-prompts", "4"])
    assert says in capsys.readouterr().out


def test_the_last_steps_evaluation_is_the_final_reward(tmp_path, monkeypatch):
    """With --eval-interval dividing --train-iters the final model was evaluated twice (and
    with --train-iters 0 the starting one): the same samples, as evaluate() restores the
    sampler's state, for a second pass over the held-out prompts."""
    from megatron_qarl.trainer.trainer import RLTrainer

    steps, evaluate = [], RLTrainer.evaluate
    monkeypatch.setattr(RLTrainer, "evaluate",
                        lambda self: steps.append(self.step) or evaluate(self))
    save = tmp_path / "run"
    main([*TINY, "--save", str(save), "--train-iters", "2", "--eval-interval", "2",
          "--eval-num-prompts", "4"])
    assert steps == [0, 2]
    evals = records(save / "metrics.jsonl", "eval")
    assert [r["step"] for r in evals] == [0, 2]
    assert records(save / "metrics.jsonl")[-1]["eval_reward"] == evals[-1]["eval_reward"]


def test_zero_rl_steps_after_a_resume_name_the_step(tmp_path, capsys):
    """A checkpoint of RL step 1 evaluated with --train-iters 0 was called the warm start's."""
    run = ["--save", str(tmp_path / "run"), "--sft-iters", "2", "--eval-num-prompts", "4"]
    main([*TINY, *run, "--train-iters", "1"])
    capsys.readouterr()
    main([*TINY, *run, "--train-iters", "0", "--load", str(tmp_path / "run")])
    assert "step 1's model, no RL steps run:" in capsys.readouterr().out


@pytest.mark.parametrize("flag", ["--exit-interval", "--save-interval"])
def test_an_interval_that_saves_needs_save(tmp_path, capsys, flag):
    """--exit-interval without --save stopped the run with nothing to resume from (rc 0, no
    word), and --save-interval was ignored."""
    with pytest.raises(SystemExit) as exit_info:
        main([*TINY, "--metrics-path", str(tmp_path / "m.jsonl"), flag, "2"])
    assert exit_info.value.code == 2
    assert f"{flag} 2 saves checkpoints to --save: add --save DIR" in capsys.readouterr().err


def test_a_flag_is_spelled_whole(capsys):
    """argparse took --max-tokens for --max-tokens-per-micro-batch; Megatron-LM's parser, like
    this one now, takes only whole flags."""
    from megatron_qarl.trainer.flags import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["--max-tokens", "64"])
    assert "unrecognized arguments: --max-tokens" in capsys.readouterr().err
    assert build_parser().parse_args(["--max-tokens-per-micro-batch", "64"]) \
        .max_tokens_per_micro_batch == 64


@pytest.mark.parametrize("rl_flags", [["--quant-targets", "experts+attention"],
                                      ["--quant-keep-operand"],
                                      ["--seq-clip-ratio-high", "0.001"],
                                      ["--tis-imp-ratio-cap", "3"]])
def test_a_warm_start_alone_takes_the_rl_phases_flags(tmp_path, rl_flags):
    """examples/tiny/train.sh gives its extra flags to its warm start too (--rollout-quant none
    --loss grpo --train-iters 0), where the checks refusing an RL flag the run would not read
    stopped it with exit 2 before any RL (a review). With RL steps they are still refused."""
    from megatron_qarl.trainer.flags import build_parser
    from megatron_qarl.trainer.validation import FlagError, validate

    warm_start = [*TINY, "--save", str(tmp_path / "w"), "--rollout-quant", "none", "--loss",
                  "grpo", "--mismatch-correction", "none", *rl_flags]
    validate(build_parser().parse_args([*warm_start, "--train-iters", "0"]), 1)
    with pytest.raises(FlagError):
        validate(build_parser().parse_args([*warm_start, "--train-iters", "1"]), 1)
