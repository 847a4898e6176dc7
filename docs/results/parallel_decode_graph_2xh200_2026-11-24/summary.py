import json, os, statistics, sys
out = sys.argv[1]
for name in sorted(f[:-6] for f in os.listdir(out) if f.endswith(".jsonl")):
    rows = [json.loads(l) for l in open(os.path.join(out, name + ".jsonl"))]
    train = [r for r in rows if r["event"] == "train"]
    evals = [r for r in rows if "eval_reward" in r or r["event"] == "eval"]
    mm = [r["mismatch_abs_log_w_token"] for r in train]
    nz = [(r["step"], r["mismatch_abs_log_w_token"]) for r in train if r["mismatch_abs_log_w_token"] > 0]
    ro = statistics.median(r["time/rollout"] for r in train)
    ev = [(r.get("step"), r.get("eval_reward", r.get("reward"))) for r in evals]
    print(f"{name}: steps {len(train)} mean mismatch {sum(mm)/len(mm):.3g} nonzero {len(nz)} "
          f"rollout median {ro:.3f} s; eval {ev[:1]} -> {ev[-1:]}")
    print("   nonzero steps:", [(s, f"{v:.2g}") for s, v in nz])
