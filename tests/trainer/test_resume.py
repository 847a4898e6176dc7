"""Resume on CPU: a killed run resumes to the same batch and weights (Adam's and Muon's
state included), and a corrupted checkpoint is reported without losing anything saved."""
import hashlib
import os
import shutil
import subprocess
import sys
import time

import pytest
import torch
from trainer_runs import TINY, checkpoint_tensors, records, train

from megatron_qarl.checkpoint.paths import TRACKER


def _digest(folder):
    h = hashlib.sha1()
    for root, dirs, files in sorted(os.walk(folder)):
        for name in sorted(files):
            path = os.path.join(root, name)
            h.update(os.path.relpath(path, folder).encode() + open(path, "rb").read())
    return h.hexdigest()


def _run_until_checkpoint_then_kill(save, step: int) -> None:
    """SIGKILL the trainer as soon as checkpoint `step` is committed (its tracker file names
    it), i.e. in the middle of step + 1: nothing after the commit may leak into the resume."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.Popen([sys.executable, "-m", "megatron_qarl.train", *TINY, "--save",
                             str(save), "--train-iters", "4", "--save-interval", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    tracker = save / TRACKER
    deadline = time.time() + 240
    try:
        while not (tracker.exists() and tracker.read_text() == str(step)):
            assert proc.poll() is None, "the trainer ended before it could be killed"
            assert time.time() < deadline, "no checkpoint within 240 s"
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory):
    """A run killed once checkpoint 2 is committed (checkpoints 0 to 2, step 3 cut short): one
    trainer launch for the tests that resume it and that corrupt it, each in its own copy."""
    save = tmp_path_factory.mktemp("killed") / "run"
    _run_until_checkpoint_then_kill(save, 2)
    return save


def test_kill_and_resume_gives_the_same_batch_and_weights(tmp_path, killed_run):
    full, cut = tmp_path / "full", tmp_path / "cut"
    train("--save", str(full), "--train-iters", "3")
    shutil.copytree(killed_run, cut)
    assert not (cut / "iter_0000003").exists() and (cut / "iter_0000002").is_dir()
    (cut / "iter_0000009.tmp").mkdir()  # a crashed save of a step this run never reaches
    resumed = train("--save", str(cut), "--load", str(cut), "--train-iters", "3")
    assert not (cut / "iter_0000009.tmp").exists()
    assert f"resumed from {cut} at step 2 of --train-iters 3\n" in resumed.stderr
    step3 = {name: [r for r in records(d / "metrics.jsonl") if r["step"] == 3]
             for name, d in (("full", full), ("cut", cut))}
    assert len(step3["cut"]) == 1  # the killed run never logged step 3
    assert [r["step"] for r in records(cut / "metrics.jsonl")] == [1, 2, 3]
    for key in ("prompt_indices", "rollout_sha1", "reward_mean"):
        assert step3["full"][0][key] == step3["cut"][0][key], key
    a = checkpoint_tensors(str(full / "iter_0000003"), tmp_path / "a")
    b = checkpoint_tensors(str(cut / "iter_0000003"), tmp_path / "b")
    assert a.keys() == b.keys() and any(k.startswith("optimizer") for k in a)
    for key in a:
        assert torch.equal(a[key], b[key]), key


@pytest.mark.parametrize("device", [
    pytest.param(["--muon-fp32-matmul-prec", "highest"], id="cpu-fp32"),
    pytest.param(["--device", "cuda", "--bf16", "--deterministic-mode"], id="cuda-bf16",
                 marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")),
    pytest.param(["--device", "cuda", "--bf16", "--deterministic-mode",
                  "--use-distributed-optimizer"], id="cuda-bf16-layer-wise",
                 marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")),
])
def test_muon_trains_and_resumes_with_its_momentum(tmp_path, device):
    """--optimizer muon (the paper's): a resume from step 1 gives step 2's weights and
    optimizer state bit for bit, Muon's momentum buffers among them (step 1's two updates
    leave them non-zero: a resume that zeroed them gave other weights). On the CPU the
    Newton-Schulz iteration runs in fp32, 20x faster there than in bf16 (tests/megatron/
    test_muon.py checks the bf16 one). On a GPU: bf16 params with fp32 main weights (Megatron's
    Float16OptimizerWithFloat16Params around Muon), also inside Megatron's layer-wise
    distributed optimizer, whose checkpoint layout is its own. Under an lr schedule (warm-up
    over step 1's two updates, cosine over step 2's), which the resume takes up at its update:
    placed at update 1 (a step counted as one update) or 0, it trained at other lrs; the warm
    start under its own (a warm-up over 2 of its 3 steps)."""
    full, cut = tmp_path / "full", tmp_path / "cut"
    muon = ["--optimizer", "muon", "--muon-extra-scale-factor", "0.2", "--lr-warmup-iters", "1",
            "--lr-decay-style", "cosine", "--min-lr", "1e-4", "--sft-lr-warmup-iters", "2",
            *device]
    train("--save", str(full), "--train-iters", "2", "--save-interval", "1", *muon)
    shutil.copytree(full / "iter_0000001", cut / "iter_0000001")
    resumed = train("--save", str(cut), "--load", str(cut), "--train-iters", "2", *muon)
    assert f"resumed from {cut} at step 1 of --train-iters 2\n" in resumed.stderr
    # step 1: updates at 0 and lr/2; step 2: at lr and halfway down the cosine (mean lrs)
    lrs = [r["lr"] for r in records(full / "metrics.jsonl")]
    assert lrs == pytest.approx([2.5e-4, (1e-3 + 5.5e-4) / 2], rel=1e-9)
    assert records(cut / "metrics.jsonl")[-1]["lr"] == lrs[1]
    assert [r["lr"] for r in records(full / "metrics.jsonl", "sft")] == [0.0, 5e-4, 1e-3]
    a = checkpoint_tensors(str(full / "iter_0000002"), tmp_path / "a")
    b = checkpoint_tensors(str(cut / "iter_0000002"), tmp_path / "b")
    assert a.keys() == b.keys()
    assert any("momentum_buffer" in k for k in a) and any("exp_avg_sq" in k for k in a)
    for key in a:
        assert torch.equal(a[key], b[key]), key
    before = checkpoint_tensors(str(full / "iter_0000001"), tmp_path / "c")
    assert any(not torch.equal(v, a[k]) for k, v in before.items() if "experts" in k)


def test_corrupted_checkpoint_is_reported_and_nothing_saved_is_lost(tmp_path, killed_run):
    save = tmp_path / "run"
    shutil.copytree(killed_run, save)
    latest = save / "iter_0000002"
    shard = sorted(p for p in latest.iterdir() if p.suffix == ".distcp")[0]
    shard.write_bytes(shard.read_bytes()[:100])  # a torn write
    before = {d: _digest(save / d) for d in ("iter_0000000", "iter_0000001", "iter_0000002")}
    proc = train("--save", str(save), "--load", str(save), "--train-iters", "3", check=False)
    assert proc.returncode == 1
    assert f"checkpoint {latest} cannot be loaded" in proc.stderr
    assert "--ckpt-step 1" in proc.stderr
    assert {d: _digest(save / d) for d in before} == before
    train("--save", str(save), "--load", str(save), "--ckpt-step", "1", "--train-iters", "2")
    assert records(save / "metrics.jsonl")[-1]["step"] == 2


@pytest.mark.parametrize("flags,message", [
    (["--num-layers", "3"], "holds another model than this run builds: num_hidden_layers 2 "
                            "there, 3 here (--num-layers)"),
    (["--optimizer", "muon"], "was saved with another parallel layout or optimizer: "
                              "--optimizer adam there, muon here"),
])
def test_another_model_or_optimizer_is_named_before_any_tensor_is_read(tmp_path, killed_run,
                                                                        flags, message):
    """The checkpoint says which model (hf_assets/config.json) and which layout and optimizer
    (its rl_state) it holds: a resume with other flags names the field and the flag, and
    changes nothing saved."""
    save = tmp_path / "run"
    shutil.copytree(killed_run, save)
    before = _digest(save)
    proc = train("--save", str(save), "--load", str(save), "--train-iters", "3", *flags,
                 check=False)
    assert proc.returncode == 1
    assert message in proc.stderr, proc.stderr[-2000:]
    assert _digest(save) == before


def _saved_param_groups(folder) -> list:
    """The optimizer's param groups a checkpoint saved (its common state)."""
    found = []

    def walk(obj):
        if isinstance(obj, dict):
            if "lr" in obj and "max_lr" in obj:
                found.append(obj)
            for value in obj.values():
                walk(value)
        elif isinstance(obj, (list, tuple)):
            for value in obj:
                walk(value)

    walk(torch.load(os.path.join(folder, "common.pt"), weights_only=False)["optimizer"])
    return found


def test_a_resume_with_another_recipe_says_so_and_trains_with_it(tmp_path, killed_run):
    """A W4A16-aligned TBPO run resumed as GRPO went on in the same folder and metrics file
    without a word (a review). The optimizer takes the resume's flags: the load restored each
    param group's max_lr, betas and eps, and the constant scheduler reads a group's max_lr
    before its own, so a resume with a lower --lr (what the NaN-step error advises) trained at
    the checkpoint's (another review)."""
    save = tmp_path / "run"
    shutil.copytree(killed_run, save)
    assert {g["lr"] for g in _saved_param_groups(save / "iter_0000002")} == {1e-3}
    flags = ["--loss", "grpo", "--no-aligned-learner", "--lr", "3e-4", "--adam-beta1", "0.5",
             "--adam-eps", "1e-6"]
    proc = train("--save", str(save), "--load", str(save), "--train-iters", "3", *flags)
    assert "with flags other than its run's: --aligned-learner True there, False here; " \
           "--loss tbpo there, grpo here; --lr 0.001 there, 0.0003 here" in proc.stderr, \
        proc.stderr[-2000:]
    groups = _saved_param_groups(save / "iter_0000003")
    assert groups and all(g["lr"] == g["max_lr"] == 3e-4 and g["betas"][0] == 0.5
                          and g["eps"] == 1e-6 for g in groups), groups
    same = train("--save", str(save), "--load", str(save), "--train-iters", "4", *flags)
    assert "flags other than its run's" not in same.stderr  # step 3 was saved with them


def test_a_rewind_points_the_tracker_at_its_step_and_keeps_the_later_ones(tmp_path,
                                                                             killed_run):
    """--ckpt-step 1 into the same folder left the tracker at 2: a rewound run stopped before
    its first save went on from step 2 next time, against a metrics file cut to step 1."""
    save = tmp_path / "run"
    shutil.copytree(killed_run, save)
    train("--save", str(save), "--load", str(save), "--ckpt-step", "1", "--train-iters", "1")
    assert (save / TRACKER).read_text() == "1"
    assert (save / "iter_0000002").is_dir()  # replaced only when the rewound run saves step 2


def test_a_warm_start_goes_on_with_another_optimizer(tmp_path, killed_run):
    """Step 0 holds no optimizer state: compare.sh-style runs copy one warm start into runs
    of any optimizer, which the layout check must not refuse."""
    save = tmp_path / "run"
    shutil.copytree(killed_run / "iter_0000000", save / "iter_0000000")
    train("--save", str(save), "--load", str(save), "--train-iters", "1", "--optimizer", "muon",
          "--muon-fp32-matmul-prec", "highest")
    assert (save / "iter_0000001").is_dir()


def test_a_torn_model_config_and_a_damaged_earlier_step_are_named(tmp_path, killed_run):
    """A torn hf_assets/config.json raised a bare JSONDecodeError; a damaged step 1 was told to
    try --ckpt-step 2, a later one (a review)."""
    save = tmp_path / "run"
    shutil.copytree(killed_run, save)
    (save / "iter_0000002" / "hf_assets" / "config.json").write_text('{"hidden_')
    before = _digest(save)
    proc = train("--save", str(save), "--load", str(save), "--train-iters", "3", check=False)
    assert proc.returncode == 1
    assert "hf_assets/config.json is not JSON" in proc.stderr, proc.stderr[-2000:]
    assert _digest(save) == before
    shard = sorted(p for p in (save / "iter_0000001").iterdir() if p.suffix == ".distcp")[0]
    shard.write_bytes(shard.read_bytes()[:100])
    proc = train("--save", str(save), "--load", str(save), "--ckpt-step", "1",
                 "--train-iters", "3", check=False)
    assert proc.returncode == 1
    assert "resume from an earlier one with --ckpt-step 0 (available: 0)" in proc.stderr
    assert _digest(save / "iter_0000000") == _digest(killed_run / "iter_0000000")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_nccl_saves_name_their_device(tmp_path):
    """The trainer binds its GPU to the NCCL process group (init_process_group's device_id, as
    Megatron-LM does), so the save's barriers know their device: torch warned at every save
    without it."""
    proc = train("--device", "cuda", "--bf16", "--save", str(tmp_path), "--train-iters", "1",
                 "--save-interval", "1", env={"PYTHONWARNINGS": "default"})
    assert (tmp_path / "iter_0000001").is_dir()
    assert "barrier(): using the device under current context" not in proc.stderr


def test_exit_interval_stops_at_each_multiple_as_megatrons(tmp_path):
    """A resumed run stops at the next multiple of --exit-interval (it stopped only at the step
    equal to it, so a resumed run went on to --train-iters)."""
    save = tmp_path / "run"
    flags = ["--save", str(save), "--sft-iters", "0", "--train-iters", "3", "--exit-interval", "1"]
    assert "stopped after step 1 (--exit-interval)" in train(*flags).stdout
    train(*flags, "--load", str(save))
    assert [r["step"] for r in records(save / "metrics.jsonl")] == [1, 2]
    assert sorted(p.name for p in save.glob("iter_*")) == ["iter_0000001", "iter_0000002"]
    assert not records(save / "metrics.jsonl", "summary")
