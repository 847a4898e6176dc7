"""Payloads and publish sessions through SGLang 0.5.23's own FlattenedTensorBucket and
MultiprocessingSerializer (its allow-list unpickler), installed without GPU packages (see
conftest.py). The checks run in one child interpreter (sglang_scenarios.py) because
importing sglang patches transformers process-wide; each is reported as its own test."""
import json
import os
import subprocess
import sys

import pytest

from sglang_cpu import ensure_sglang_path

HERE = os.path.dirname(__file__)
SCENARIOS = ["payload_round_trip", "publish_session_order_and_content",
             "publish_engine_dies_midway",
             "publish_after_a_failed_bucket_updates_the_engine_again",
             "publish_stream_error_fails_every_engine",
             "publish_rejected_end_keeps_engine_paused",
             "publish_timeout_then_total_failure",
             "publish_skips_unreachable_engine_until_the_next",
             "ipc_flattens_each_bucket_once_for_all_engines",
             "nccl_publish_rebuilds_the_group_without_a_failed_engine",
             "samples_of_weights_older_than_the_publish_are_refused",
             "publish_after_a_release_takes_the_weights_back_first"]


@pytest.fixture(scope="module")
def outcomes():
    target = ensure_sglang_path()
    proc = subprocess.run([sys.executable, os.path.join(HERE, "sglang_scenarios.py"), target],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_with_sglang_classes(outcomes, scenario):
    assert outcomes.get(scenario) == "ok", outcomes.get(scenario, "scenario did not run")
