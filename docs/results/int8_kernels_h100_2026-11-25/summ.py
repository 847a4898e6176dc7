import json, sys
for path in sys.argv[1:]:
    print(path)
    for line in open(path):
        r = json.loads(line)
        if r.get("event") != "train":
            continue
        t = {k: round(v, 3) for k, v in r.items() if k.startswith("time/")}
        print(" step", r["step"], "mismatch_tok %.3e" % r["mismatch_abs_log_w_token"], "k3 %.2e" % r["mismatch_k3_kl"],
              "train_peak %.1f" % r.get("mem/train_peak_gib", 0), "quant_s %.3f" % r.get("quant/seconds", 0), t)
