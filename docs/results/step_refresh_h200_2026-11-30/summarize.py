"""Per-step phase times, throughput, mismatch and peaks of bench_reduced.sh's metrics files.
Usage: summarize.py OUT_DIR"""
import glob
import json
import os
import sys

KEYS = ("time", "time/rollout", "time/old_logprobs", "time/train", "time/publish",
        "tokens_per_s", "mismatch_abs_log_w_token", "mismatch_k3_kl", "quant/seconds",
        "mem/step_start_gib", "mem/rollout_peak_gib", "mem/train_peak_gib", "reward_mean",
        "response_length_mean")

for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
    print(f"== {os.path.basename(path)}")
    for line in open(path):
        rec = json.loads(line)
        if "time/rollout" not in rec:
            continue
        print(f"  step {rec['step']}: " + ", ".join(
            f"{k}={rec[k]:.4g}" for k in KEYS if isinstance(rec.get(k), (int, float))))
