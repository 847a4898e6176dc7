"""Error-token detector on crafted responses."""
import pytest

from megatron_qarl.rl.objectives import ErrorTokenConfig, detect_error_tokens, error_token_metrics

VOCAB = {i: chr(ord("a") + i % 26) for i in range(100)}
VOCAB[99] = "\ufffd"
VOCAB[98] = "\x07"


def detokenize(ids):
    return "".join(VOCAB[i] for i in ids)


def test_clean_response_not_flagged():
    report = detect_error_tokens(list(range(60)), detokenize)
    assert (report.longest_token_run, report.loop_period, report.loop_repeats) == (1, 0, 0)
    assert report.bad_char_fraction == 0.0 and not report.is_error


def test_token_run_flagged():
    report = detect_error_tokens([1, 2] + [7] * 20 + [3], detokenize)
    assert report.longest_token_run == 20
    assert report.loop_repeats == 0  # a single-token run is not reported as an n-gram loop
    assert report.is_error


def test_ngram_loop_flagged_with_its_period():
    report = detect_error_tokens([40, 41] + [5, 6, 7] * 10 + [5, 6, 42])
    assert (report.loop_period, report.loop_repeats) == (3, 10)
    assert report.longest_token_run == 1 and report.is_error
    short = detect_error_tokens([5, 6, 7] * 3 + [1, 2, 3])
    assert short.loop_repeats == 3 and not short.is_error


def test_loop_of_ngram_with_repeated_token_inside():
    report = detect_error_tokens([1, 1, 2] * 9)  # "aab aab ...": a loop, token runs of 2
    assert (report.loop_period, report.loop_repeats, report.longest_token_run) == (3, 9, 2)


def test_replacement_and_control_characters():
    ids = list(range(18)) + [99, 98]  # 2 bad chars out of 20
    report = detect_error_tokens(ids, detokenize)
    assert report.bad_char_fraction == pytest.approx(0.1)
    assert report.is_error
    assert not detect_error_tokens(ids, detokenize, ErrorTokenConfig(max_bad_char_fraction=0.2)).is_error
    assert detect_error_tokens([], detokenize).longest_token_run == 0


def test_batch_metrics():
    metrics = error_token_metrics([list(range(30)), [7] * 30, [5, 6] * 12], detokenize)
    assert metrics["error_resp_frac"] == pytest.approx(2 / 3)
    assert metrics["error_longest_token_run_max"] == 30
    assert metrics["error_loop_repeats_max"] == 12


def test_invalid_detector_config():
    with pytest.raises(ValueError, match="max_token_run must be an integer >= 2"):
        ErrorTokenConfig(max_token_run=1)
    with pytest.raises(ValueError, match="max_bad_char_fraction must be in"):
        ErrorTokenConfig(max_bad_char_fraction=1.5)
