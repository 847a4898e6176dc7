"""The commands README.md and docs/ tell users to type, checked against what they run: the
trainer's, tools/checkpoint.py's and the kernel tools' flags through their own parsers; an
example script's flags after its positional arguments (it hands them to the trainer) through
the trainer's; the VAR=value settings before a script against the variables it reads, and its
word arguments (device, variant) against its case labels. A renamed flag would otherwise leave
a doc whose command exits 2 or quietly does something else."""
import importlib
import os
import re
import shlex
from typing import NamedTuple

import pytest
import torch

from tool_scripts import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md"] + sorted(f"docs/{name}" for name in os.listdir(os.path.join(ROOT, "docs"))
                              if name.endswith(".md"))
# their inline spans are the commands of past runs, as the runs wrote them into their tables
RECORDS = {"docs/benchmarks.md", "docs/kernel_rounds.md"}
TOOLS = re.compile(r"megatron_qarl\.train|tools/checkpoint\.py|qarl_kernels\.(bench|tune)"
                   r"|examples/\S+\.sh")
PLACEHOLDERS = {"...", "FLAGS"}  # "more flags here" in the docs' prose
# read by Python or torchrun, not by the scripts
PROCESS_ENV = {"PYTHONPATH", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS"}


class Command(NamedTuple):
    doc: str
    line: str
    target: str  # a module, tools/checkpoint.py, or an examples/ script
    env: dict
    args: list


def _commands(doc: str, line: str, shell_vars: dict):
    """The commands of one line of a doc's shell, with the block's earlier NAME=value lines and
    a for loop's first value expanded."""
    words = shlex.split(line, comments=True)
    loop = re.match(r"for (\w+) in (\S+)", line.strip())
    if loop:
        shell_vars[loop[1]] = loop[2]
    if words and all(re.match(r"\w+=", w) for w in words[words[0] == "export":]):
        shell_vars.update(w.split("=", 1) for w in words[words[0] == "export":])
        return
    if not TOOLS.search(line):
        return
    line = re.sub(r"\$\{?(\w+)\}?", lambda m: shell_vars.get(m[1], m[0]), line)
    words = [w.strip("[]") for w in shlex.split(line, comments=True) if w not in PLACEHOLDERS]
    segment = []
    for word in words + ["&&"]:
        if word not in ("&&", ";", "|", "do"):
            segment.append(word)
            continue
        env = {}
        while segment and re.match(r"[A-Z_]+=", segment[0]):
            env.update([segment.pop(0).split("=", 1)])
        if segment and segment[0] in ("bash", "python", "python3", "torchrun"):
            segment = segment[segment.index("-m") + 1 if "-m" in segment else 1:]
        if segment and TOOLS.fullmatch(segment[0]):
            yield Command(doc, line, segment[0], env, segment[1:])
        segment = []


def documented_commands() -> list:
    found = []
    for doc in DOCS:
        text = open(os.path.join(ROOT, doc)).read()
        for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, re.S):
            shell_vars = {}
            for line in re.sub(r"\\\n", " ", block).splitlines():
                found += _commands(doc, line, shell_vars)
        if doc not in RECORDS:
            prose = re.sub(r"```.*?```", "", text, flags=re.S)
            for span in re.findall(r"`([^`\n]+)`", prose):
                if " " in span and TOOLS.search(span):  # a name alone is no command
                    found += _commands(doc, span, {})
    return found


COMMANDS = documented_commands()


def _ids(commands):
    return [f"{c.doc}:{c.target}:{' '.join(c.args)[:40]}" for c in commands]


def _trainer_parses(args: list, where: str) -> None:
    from megatron_qarl.trainer.flags import build_parser

    _parses(build_parser(), args, where)


def _parses(parser, args: list, where: str) -> None:
    try:
        parser.parse_args(args)
    except SystemExit as stop:  # argparse's error exit, or --help's 0
        assert stop.code == 0, f"{where}: {parser.prog} refuses {args}"


def test_the_docs_show_commands_of_every_tool():
    """The scan itself: a regex that stopped matching would pass every test below vacuously."""
    targets = {c.target for c in COMMANDS}
    assert {"megatron_qarl.train", "tools/checkpoint.py", "qarl_kernels.bench",
            "qarl_kernels.tune", "examples/tiny/train.sh", "examples/tiny/compare.sh",
            "examples/qwen3_30b_a3b/train.sh",
            "examples/qwen3_30b_a3b/bench_reduced.sh"} <= targets, targets
    assert len(COMMANDS) > 40


PARSED = [c for c in COMMANDS if c.target in ("megatron_qarl.train", "tools/checkpoint.py")]


@pytest.mark.parametrize("command", PARSED, ids=_ids(PARSED))
def test_trainer_and_checkpoint_commands_parse(command, capsys):
    where = f"{command.doc}: {command.line}"
    if command.target == "megatron_qarl.train":
        _trainer_parses(command.args, where)
    else:
        _parses(load_tool("checkpoint").build_parser(), command.args, where)


GPU_TOOLS = [c for c in COMMANDS if c.target.startswith("qarl_kernels.")]


@pytest.mark.parametrize("command", GPU_TOOLS, ids=_ids(GPU_TOOLS))
def test_kernel_tool_commands_parse(command, monkeypatch, capsys):
    """These time kernels right after parsing, so they run with CUDA hidden: past their parser
    they stop at the GPU check (exit 2 is argparse refusing a flag)."""
    module = importlib.import_module(command.target.replace(".bench", ".bench.__main__"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as stop:
        module.main(command.args)
    assert "needs a CUDA GPU" in str(stop.value.code), f"{command.doc}: {command.line}"


SCRIPTS = [c for c in COMMANDS if c.target.startswith("examples/")]


def _script_text(relative: str) -> str:
    """The script and the scripts beside it that it runs (compare.sh runs train.sh)."""
    text = open(os.path.join(ROOT, relative)).read()
    folder = os.path.dirname(relative)
    return text + "".join(open(os.path.join(ROOT, folder, name)).read()
                          for name in set(re.findall(r"/(\w+\.sh)", text))
                          if os.path.exists(os.path.join(ROOT, folder, name)))


@pytest.mark.parametrize("command", SCRIPTS, ids=_ids(SCRIPTS))
def test_example_script_commands_use_what_the_script_reads(command, capsys):
    where = f"{command.doc}: {command.line}"
    own = open(os.path.join(ROOT, command.target)).read()
    text = _script_text(command.target)
    shifts = re.search(r"^\s*(?:\S.*;\s*)?shift(?: (\d))?", own, re.M)
    assert shifts, f"{command.target}: no `shift` of its positional arguments"
    positional = int(shifts[1] or 1)
    for name in set(command.env) - PROCESS_ENV:
        assert re.search(rf"\$\{{?{name}\b", text), f"{where}: the script never reads {name}"
    words = command.env.get("VARIANTS", "").split() + [
        a for a in command.args[:positional] if re.fullmatch(r"[a-z0-9][a-z0-9-]*", a)]
    for word in words:
        assert re.search(rf"(^|[\s|(]){re.escape(word)}[|)]", text, re.M), (
            f"{where}: {word!r} is none of the script's cases")
    _trainer_parses(command.args[positional:], where)
