"""Datasets, tokenizer, prompt order and rewards: the pieces a run reads before any model."""
import codecs
import json

import pytest

from megatron_qarl.rl.data import (
    CharTokenizer,
    DatasetError,
    PromptOrder,
    arithmetic_rows,
    build_prompts,
    read_rows,
)
from megatron_qarl.rl.rewards import (
    RewardError,
    arithmetic_reward,
    boxed_match_reward,
    get_reward,
    last_boxed,
    math_verify_reward,
)


def test_jsonl_malformed_row_names_file_and_line(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text(json.dumps({"prompt": "1+1=", "answer": "2"}) + "\n" + "{not json\n")
    with pytest.raises(DatasetError, match=rf"{path}:2: not valid JSON"):
        read_rows(str(path))
    path.write_text(json.dumps({"prompt": "1+1=", "answer": "2"}) + "\n\n"
                    + json.dumps({"question": "x"}) + "\n")
    with pytest.raises(DatasetError, match=rf"{path}:3: no field 'prompt'.*--prompt-key"):
        read_rows(str(path))


def test_a_json_array_and_a_byte_order_mark_are_read(tmp_path):
    """A .json array was read line by line ("not valid JSON" on line 1), and a UTF-8 BOM
    made a .jsonl's first row invalid."""
    rows = [{"prompt": "1+1=", "answer": "2"}, {"prompt": "2+2=", "answer": "4"}]
    array = tmp_path / "prompts.json"
    array.write_text(json.dumps(rows, indent=1))
    assert read_rows(str(array)) == [{**r, "where": f"{array}: row {i}"}
                                     for i, r in enumerate(rows, start=1)]
    bom = tmp_path / "bom.jsonl"
    bom.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8-sig")
    assert read_rows(str(bom)) == [{**r, "where": f"{bom}:{i}"}
                                   for i, r in enumerate(rows, start=1)]
    array.write_text(json.dumps([rows[0], {"question": "x"}]))
    with pytest.raises(DatasetError, match=rf"{array}: row 2: no field 'prompt'"):
        read_rows(str(array))


def test_jsonl_rows_with_custom_keys_and_template(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"q": "2+3=", "a": 5}) + "\n")
    rows = read_rows(str(path), prompt_key="q", answer_key="a")
    assert rows == [{"prompt": "2+3=", "answer": "5", "where": f"{path}:1"}]
    tok = CharTokenizer()
    (row,) = build_prompts(rows, "qa", tok, max_prompt_tokens=64, source=str(path))
    assert row.prompt_text == "Question: 2+3=\nAnswer: "
    assert tok.decode(row.prompt_ids) == row.prompt_text
    with pytest.raises(DatasetError, match=rf"{path}:1: a 23-token prompt.*--skip-long-prompts"):
        build_prompts(rows, "qa", tok, max_prompt_tokens=10, source=str(path))
    # --skip-long-prompts: the long ones are left out, and not all of them
    short = {"prompt": "1=", "answer": "1"}
    kept = build_prompts([*rows, short], "plain", tok, max_prompt_tokens=3, source=str(path),
                         skip_long=True)
    assert [r.prompt_text for r in kept] == ["1="]
    with pytest.raises(DatasetError, match="every prompt is longer than"):
        build_prompts(rows, "qa", tok, max_prompt_tokens=10, source=str(path), skip_long=True)
    # an empty prompt would reach the engine as a zero-length first window
    with pytest.raises(DatasetError, match=rf"{path}: row 2: an empty prompt"):
        build_prompts(rows + [{"prompt": "", "answer": "0"}], "plain", tok,
                      max_prompt_tokens=64, source=str(path))
    # a character the built-in tokenizer lacks: the row is named (a traceback named none)
    with pytest.raises(DatasetError, match=rf"{path}: row 2: character 'é' is not in"):
        build_prompts(rows + [{"prompt": "café", "answer": "0"}], "plain", tok,
                      max_prompt_tokens=64, source=str(path))


def test_numeric_and_blank_answers(tmp_path):
    """A parquet column of integers with a gap reads as floats: "2.0" never matched 2; NaN
    and a blank answer loaded, and a blank answer scored an empty response 1."""
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "1+1=", "answer": 2.0}\n{"prompt": "x", "answer": 0.5}\n')
    assert [r["answer"] for r in read_rows(str(path))] == ["2", "0.5"]
    for bad in ("NaN", "Infinity", '"  "', "null"):
        path.write_text('{"prompt": "1+1=", "answer": %s}\n' % bad)
        with pytest.raises(DatasetError, match=rf"{path}:1: field 'answer' must be a non-empty"):
            read_rows(str(path))


def test_errors_name_the_line_of_the_file(tmp_path):
    """Blank lines shifted build_prompts' row numbers off the file's lines, and a file that
    is not UTF-8 gave a bare UnicodeDecodeError."""
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"prompt": "1=", "answer": "1"}\n\n{"prompt": "caf\xc3\xa9", '
                     b'"answer": "0"}\n')
    with pytest.raises(DatasetError, match=rf"{path}:3: character 'é'"):
        build_prompts(read_rows(str(path)), "plain", CharTokenizer(), 64, str(path))
    data = b'{"prompt": "1=", "answer": "1"}\n{"prompt": "caf\xe9", "answer": 0}\n'
    path.write_bytes(data)
    at = data.index(b"\xe9")
    with pytest.raises(DatasetError, match=rf"{path}:2: not UTF-8 text .* at byte {at}\)"):
        read_rows(str(path))
    path.write_text('{\n "data": []\n}\n')
    with pytest.raises(DatasetError, match="a .jsonl holds one JSON object a line"):
        read_rows(str(path))


def test_the_warm_starts_answers_are_checked_up_front(tmp_path):
    """An answer the tokenizer cannot encode loaded, then failed the run inside the warm
    start with no row named."""
    tok, source = CharTokenizer(), str(tmp_path / "p.jsonl")
    rows = [{"prompt": "a=", "answer": "90°"}, {"prompt": "b=", "answer": "x" * 8}]
    assert len(build_prompts(rows, "plain", tok, 64, source)) == 2  # no warm start: kept
    with pytest.raises(DatasetError, match=rf"{source}: row 1: character '°'"):
        build_prompts(rows, "plain", tok, 64, source, max_answer_tokens=16)
    rows[0]["answer"] = "90"
    with pytest.raises(DatasetError, match=r"row 2: the warm start trains on its answer, 9 "
                                           r"tokens .* --rollout-max-new-tokens = 8"):
        build_prompts(rows, "plain", tok, 64, source, max_answer_tokens=8)
    assert len(build_prompts(rows, "plain", tok, 64, source, max_answer_tokens=9)) == 2


def test_char_tokenizer_roundtrip_and_unknown_ids():
    tok = CharTokenizer()
    ids = tok.encode("12+34=46\n")
    assert tok.decode(ids + [tok.eos_id]) == "12+34=46\n"
    assert tok.decode([tok.vocab_size + 3]) == "\ufffd"
    # <pad> sampled inside a response is not text: it vanished, and "1<pad>2" scored 12
    padded = tok.decode(tok.encode("1") + [tok.pad_id] + tok.encode("2") + [tok.eos_id])
    assert padded == "1\ufffd2" and arithmetic_reward(padded, "12") == 0.0
    with pytest.raises(ValueError, match="not in the built-in character tokenizer"):
        tok.encode("é")


def test_arithmetic_rows_are_deterministic_sums():
    rows = arithmetic_rows(50, 3, seed=7)
    assert rows == arithmetic_rows(50, 3, seed=7) and rows != arithmetic_rows(50, 3, seed=8)
    for row in rows:
        a, b = row["prompt"].rstrip("=").split("+")
        assert int(row["answer"]) == int(a) + int(b) and max(int(a), int(b)) < 1000


def test_prompt_order_resumes_exactly_across_epochs():
    full = PromptOrder(10, seed=3)
    expected = [full.next_indices(4) for _ in range(5)]
    assert sorted(expected[0] + expected[1] + expected[2][:2]) == list(range(10))
    first = PromptOrder(10, seed=3)
    seen = [first.next_indices(4) for _ in range(2)]
    resumed = PromptOrder(10, seed=3)
    resumed.load_state_dict(first.state_dict())
    assert seen + [resumed.next_indices(4) for _ in range(3)] == expected
    with pytest.raises(ValueError, match="same --prompt-data and --seed"):
        PromptOrder(11, seed=3).load_state_dict(first.state_dict())


def test_rewards():
    assert last_boxed(r"x \boxed{\frac{1}{2}} then \boxed{3^{2}}") == "3^{2}"
    assert last_boxed(r"\boxed{unfinished") is None
    assert last_boxed(r"so \boxed {42} and \fbox{\frac{1}{2}}") == r"\frac{1}{2}"
    assert last_boxed(r"the answer is \boxed {42}.") == "42"  # LaTeX allows the space
    assert boxed_match_reward(r"so \boxed{ 42 }.", "42") == 1.0
    assert boxed_match_reward("42", "42") == 0.0
    assert math_verify_reward(r"thus \boxed{\frac{1}{2}}", "0.5") == 1.0
    assert math_verify_reward(r"thus \boxed{\frac{1}{3}}", "0.5") == 0.0
    # cut off inside the box: the reasoning's numbers (3 apples) scored 1 as the answer
    assert math_verify_reward(r"so 3 apples; the answer is \boxed{4", "3") == 0.0
    assert math_verify_reward(r"\boxed{3} hmm wait, actually \boxed{4", "3") == 0.0
    assert math_verify_reward("there are 3 apples", "3") == 1.0  # no box: the text
    assert arithmetic_reward("46", "46") == 1.0 and arithmetic_reward("46 47", "46") == 0.0


def test_a_users_reward_loads_as_module_function(tmp_path, monkeypatch):
    (tmp_path / "my_rewards.py").write_text(
        "def length(response, answer):\n    return len(response) / 10\n"
        "def text(response, answer):\n    return 'yes'\n"
        "def nan(response, answer):\n    return float('nan')\n"
        "def exact(response, answer):\n    return response == answer\n"
        "def tensor(response, answer):\n    import torch\n    return torch.tensor([0.5])\n"
        "def vector(response, answer):\n    import torch\n    return torch.ones(2)\n"
        "NOT_CALLABLE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert get_reward("my_rewards:length")("abcd", "x") == 0.4
    assert get_reward("my_rewards:exact")("7", "7") == 1.0  # a bool counts, as a float
    assert get_reward("my_rewards:tensor")("7", "7") == 0.5  # one number, as a tensor
    assert get_reward("arithmetic") is arithmetic_reward
    for spec, message in [("my_rewards:text", "returned 'yes' for the response 'abc'"),
                          ("my_rewards:nan", "returned nan"),
                          ("my_rewards:vector", "must be one finite number")]:
        with pytest.raises(RewardError, match=message):
            get_reward(spec)("abc", "1")
    with pytest.raises(RewardError, match="defines no callable 'NOT_CALLABLE'"):
        get_reward("my_rewards:NOT_CALLABLE")
    with pytest.raises(RewardError, match="defines no callable 'missing'"):
        get_reward("my_rewards:missing")
    with pytest.raises(RewardError, match="cannot import 'no_such_module'.*PYTHONPATH"):
        get_reward("no_such_module:fn")
    with pytest.raises(RewardError, match="one of arithmetic, boxed, math-verify, or "
                                          "module:function"):
        get_reward("exact-match")


def _save_hf_tokenizer(path, generation_eos=None):
    """A local character-level HF tokenizer (no network), optionally with the model's
    generation_config.json beside it."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<eos>": 1, "<end>": 2, **{c: i + 3 for i, c in enumerate("0123456789+=")}}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    raw.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    raw.decoder = decoders.Fuse()  # tokens joined without spaces, as byte-level BPE's are
    PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<eos>", pad_token="<pad>",
                            additional_special_tokens=["<end>"]).save_pretrained(path)
    if generation_eos is not None:
        (path / "generation_config.json").write_text(json.dumps({"eos_token_id": generation_eos}))


@pytest.mark.parametrize("generation_eos, stop_ids", [(None, (1,)), (2, (1, 2)), ([1, 2], (1, 2))])
def test_an_hf_tokenizer_stops_where_sglang_does(tmp_path, generation_eos, stop_ids):
    """SGLang stops at the generation config's eos ids as well as the tokenizer's (Qwen3:
    <|im_end|> and <|endoftext|>): the rollouts' stop set is the same under either engine."""
    from megatron_qarl.rl.data.tokenizers import build_tokenizer

    _save_hf_tokenizer(tmp_path, generation_eos)
    tok = build_tokenizer("hf", str(tmp_path))
    assert (tok.eos_id, tok.pad_id, tok.stop_ids) == (1, 0, stop_ids)
    assert tok.encode("12+3=") == [4, 5, 13, 6, 14]
    assert build_tokenizer("char", None).stop_ids == (1,)
    # an id past the tokenizer (a padded model vocabulary) vanished in transformers' decode
    assert tok.decode([4, tok.vocab_size + 100, 5, 1]) == "1\ufffd2"
    assert tok.decode([4, 2, 5]) == "12"  # special tokens are skipped, as SGLang does


def test_hf_tokenizer_files_that_cannot_be_used_are_named(tmp_path):
    from megatron_qarl.rl.data.tokenizers import build_tokenizer

    _save_hf_tokenizer(tmp_path)
    tok = build_tokenizer("hf", str(tmp_path))
    with pytest.raises(DatasetError, match=r"--prompt-template chat-boxed: .* no chat template"):
        build_prompts([{"prompt": "1+1=", "answer": "2"}], "chat-boxed", tok, 64, "p.jsonl")
    (tmp_path / "generation_config.json").write_text("{not json")
    with pytest.raises(DatasetError, match=r"generation_config.json: not a JSON object"):
        build_tokenizer("hf", str(tmp_path))


def test_a_folder_without_an_hf_tokenizer_names_the_flag(tmp_path):
    """transformers' own ValueError reached the user as a traceback that named no flag."""
    from megatron_qarl.rl.data import DatasetError
    from megatron_qarl.rl.data.tokenizers import build_tokenizer

    with pytest.raises(DatasetError, match=r"--tokenizer-model .*could not load a tokenizer"):
        build_tokenizer("hf", str(tmp_path))
    _save_hf_tokenizer(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    config["eos_token"] = None
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(DatasetError, match=r"--tokenizer-model .*defines no eos token"):
        build_tokenizer("hf", str(tmp_path))


def _prompt_source(**flags):
    """The trainer's prompt methods on its flags, without the rest of its set-up."""
    import types
    from types import SimpleNamespace

    from megatron_qarl.rl.data import CharTokenizer
    from megatron_qarl.trainer.trainer import RLTrainer

    args = SimpleNamespace(prompt_data="synthetic:arithmetic", eval_prompt_data=None,
                           eval_num_prompts=128, seed=1234, synthetic_num_prompts=4000,
                           synthetic_digits=2, prompt_key="prompt", answer_key="answer",
                           seq_length=16, rollout_max_new_tokens=6, prompt_template="plain",
                           skip_long_prompts=False)
    vars(args).update(flags)
    trainer = SimpleNamespace(args=args, tokenizer=CharTokenizer(), is_logger=False)
    trainer._prompts = types.MethodType(RLTrainer._prompts, trainer)
    trainer.train_rows = trainer._prompts(args.prompt_data, args.synthetic_num_prompts, args.seed)
    return trainer, types.MethodType(RLTrainer._held_out_prompts, trainer)


def test_synthetic_held_out_prompts_are_not_trained_on():
    """A second draw of the task put 24 of the tiny example's 4000 training prompts (3261
    distinct) among its 128 held-out ones, and 3 twice: the held-out reward partly measured
    training prompts."""
    trainer, held_out = _prompt_source()
    rows = held_out()
    texts = [r.prompt_text for r in rows]
    assert len(texts) == 128 == len(set(texts))
    assert not set(texts) & {r.prompt_text for r in trainer.train_rows}
    _, too_few = _prompt_source(synthetic_digits=1)  # 100 prompts, all drawn for training
    with pytest.raises(DatasetError, match="only 0 of its prompts are neither trained on"):
        too_few()


def test_arithmetic_operands_take_every_value_of_their_digits():
    """Operands have 1..digits digits: every value 0..10**digits - 1 and none past it."""
    rows = arithmetic_rows(600, 1, seed=5)
    operands = [row["prompt"].rstrip("=").split("+") for row in rows]
    assert {int(a) for a, _ in operands} == set(range(10)) == {int(b) for _, b in operands}
    with pytest.raises(ValueError, match="--synthetic-digits must be >= 1, got 0"):
        arithmetic_rows(5, 0, seed=5)


def test_rows_a_reader_must_not_take_as_text(tmp_path):
    """A JSON true is no answer ("True" would be graded), an empty file no dataset."""
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "1+1=", "answer": true}\n')
    with pytest.raises(DatasetError, match=rf"{path}:1: field 'answer' must be a non-empty"):
        read_rows(str(path))
    path.write_text("\n")
    with pytest.raises(DatasetError, match=rf"{path}: no rows"):
        read_rows(str(path))


def test_whitespace_around_rows_and_a_bom_before_a_bad_byte(tmp_path):
    rows = [{"prompt": "1+1=", "answer": "2"}, {"prompt": "2+2=", "answer": "4"}]
    array = tmp_path / "p.json"
    array.write_text("\n  " + json.dumps(rows))  # an array after blank space is still one
    assert [r["answer"] for r in read_rows(str(array))] == ["2", "4"]
    lines = tmp_path / "p.jsonl"
    lines.write_text(json.dumps(rows[0]) + "\n   \n" + json.dumps(rows[1]) + "\n")
    assert [r["where"] for r in read_rows(str(lines))] == [f"{lines}:1", f"{lines}:3"]
    data = codecs.BOM_UTF8 + b'{"prompt": "1=", "answer": "1"}\n{"prompt": "caf\xe9"}\n'
    lines.write_bytes(data)  # the byte named is the file's, BOM included
    at = data.index(b"\xe9")
    with pytest.raises(DatasetError, match=rf"{lines}:2: not UTF-8 text .* at byte {at}\)"):
        read_rows(str(lines))


def test_a_prompt_of_exactly_the_budget_is_kept():
    tok = CharTokenizer()
    (row,) = build_prompts([{"prompt": "1+1=", "answer": "2"}], "plain", tok, 4, "p.jsonl")
    assert row.prompt_ids == tok.encode("1+1=")


def test_prompt_order_reshuffles_each_epoch_and_resumes_inside_a_later_one():
    order = PromptOrder(10, seed=3)
    epochs = [order.next_indices(10) for _ in range(3)]
    assert all(sorted(e) == list(range(10)) for e in epochs)
    assert epochs[0] != epochs[1] != epochs[2]  # not one order repeated
    first = PromptOrder(10, seed=3)
    seen = first.next_indices(14)  # into the second epoch
    resumed = PromptOrder(10, seed=3)
    resumed.load_state_dict(first.state_dict())
    assert seen + resumed.next_indices(16) == sum(epochs, [])
    with pytest.raises(DatasetError, match="seed 3, this run 10 and 4"):
        PromptOrder(10, seed=4).load_state_dict(first.state_dict())


def test_templates_that_cannot_render_are_refused_up_front():
    from megatron_qarl.rl.data import check_template

    with pytest.raises(ValueError, match="chat-boxed needs a tokenizer with a chat template: "
                                         "add --tokenizer-type hf"):
        check_template("chat-boxed", "char")
    with pytest.raises(ValueError, match=r"'\{prompt\} = \{answer\}' is not a valid format"):
        check_template("{prompt} = {answer}", "char")
    check_template("Q: {prompt} {{x}}", "char")  # escaped braces are text


def test_an_hf_tokenizer_without_pad_pads_with_eos_and_names_its_vocabularys_end(tmp_path):
    from transformers import AutoTokenizer

    from megatron_qarl.rl.data.tokenizers import build_tokenizer

    _save_hf_tokenizer(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    config["pad_token"] = None
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    assert AutoTokenizer.from_pretrained(str(tmp_path)).pad_token_id is None
    tok = build_tokenizer("hf", str(tmp_path))
    assert (tok.eos_id, tok.pad_id) == (1, 1)
    # the first id past the tokenizer is past it too
    assert tok.decode([4, tok.vocab_size, 5, tok.vocab_size + 1, 6]) == "1\ufffd2\ufffd3"


def test_rewards_normalise_whitespace_dollars_and_a_final_period():
    assert arithmetic_reward("46\n", "46") == 1.0
    assert last_boxed("\\boxed{\n42\n}") == "42"
    assert boxed_match_reward("so \\boxed{\n42\n}", "42") == 1.0
    assert boxed_match_reward(r"so \boxed{$42$}", "42") == 1.0
    assert boxed_match_reward(r"so \boxed{42.}", "$42$") == 1.0
    assert boxed_match_reward(r"so \boxed{4.2}", "42") == 0.0


def test_a_users_reward_of_numeric_text_is_refused(tmp_path, monkeypatch):
    """float() takes "1", but a reward returning text is a bug in it, not a score."""
    (tmp_path / "text_rewards.py").write_text("def one(response, answer):\n    return '1'\n"
                                              "def raw(response, answer):\n    return b'0'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec, value in [("text_rewards:one", "'1'"), ("text_rewards:raw", "b'0'")]:
        with pytest.raises(RewardError, match=f"returned {value} for the response 'abc'"):
            get_reward(spec)("abc", "1")


def test_a_file_whose_name_starts_like_a_synthetic_task_is_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "synthetic.jsonl").write_text('{"prompt": "1+1=", "answer": "2"}\n')
    assert read_rows("synthetic.jsonl") == [{"prompt": "1+1=", "answer": "2",
                                            "where": "synthetic.jsonl:1"}]
