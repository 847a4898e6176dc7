"""Plot the three-way comparison from each run's rl/metrics.jsonl: reward, held-out greedy
reward, sampler/learner mismatch and error-token rate per step; print a summary table."""
from __future__ import annotations

import json
import os
import sys

PANELS = (("reward_mean", "train reward (sampled)"), ("eval_reward", "held-out reward (greedy)"),
          ("mismatch_abs_log_w_token", "mean |log learner - log sampler| per token"),
          ("mismatch_k3_kl", "k3 KL(sampler || learner)"),
          ("error_resp_frac", "error-token response rate"),
          ("response_length_mean", "response length"))


def load(folder: str) -> list:
    with open(os.path.join(folder, "metrics.jsonl")) as f:
        return [r for r in map(json.loads, f) if r["event"] in ("train", "eval", "summary")]


def plot(out: str, runs: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    for ax, (key, title) in zip(axes.flat, PANELS):
        for name, recs in runs.items():
            pts = [(r["step"], r[key]) for r in recs if isinstance(r.get(key), (int, float))]
            if pts:
                ax.plot(*zip(*pts), marker="o" if key == "eval_reward" else None,
                        markersize=3, label=name)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("RL step")
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    png = os.path.join(out, "tiny_comparison.png")
    fig.savefig(png, dpi=110)
    print(f"plot: {png}")


def table(runs: dict) -> None:
    print("| variant | held-out reward before -> after | mean train reward (last 10 steps) "
          "| mean mismatch per token | mean k3 KL | error-token rate |")
    print("|---|---|---|---|---|---|")
    for name, recs in runs.items():
        train = [r for r in recs if "reward_mean" in r]
        summary = [r for r in recs if "reward_after" in r]
        ba = (f"{summary[-1]['reward_before']:.3f} -> {summary[-1]['reward_after']:.3f}"
              if summary else "n/a")
        mean = lambda k, rs=train: sum(r[k] for r in rs) / max(len(rs), 1)  # noqa: E731
        print(f"| {name} | {ba} | {mean('reward_mean', train[-10:]):.3f} "
              f"| {mean('mismatch_abs_log_w_token'):.2e} | {mean('mismatch_k3_kl'):.2e} "
              f"| {mean('error_resp_frac'):.3f} |")


def main(out: str, variants: list) -> None:
    runs = {v: load(os.path.join(out, v, "rl")) for v in variants}
    table(runs)
    try:
        plot(out, runs)
    except ImportError:
        print("no plot: matplotlib is not installed (pip install matplotlib)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
