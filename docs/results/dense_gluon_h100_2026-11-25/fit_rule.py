"""The search that fitted w4a16_gemm.gluon_dense_tiles to call2_dense_split_sweep.csv: a family
of rules (token tile by rows, split while the programs fit T_small / T_big slots, two groups a
stage while the programs fit gth), scored by mean and worst time over each cell's best.
Run here: python fit_rule.py [CSV] (default: this folder's csv; call2_dense_split_sweep.py
writes dense_split_sweep.csv under $OUT or the working directory)."""
import collections
import csv
import itertools
import sys

cells, ref = collections.defaultdict(dict), {}
for r in csv.DictReader(open(sys.argv[1] if len(sys.argv) > 1 else "call2_dense_split_sweep.csv")):
    key = (r["shape"], int(r["m"]))
    cfg = (int(r["block_m"]), int(r["block_n"]), int(r["stages"]), int(r["groups"]),
           int(r["split"]), r["x_async"] == "True")
    cells[key][cfg] = float(r["us"])
    ref[key] = (float(r["bf16_us"]), float(r["current_us"]))
dims = {"qkv": (5120, 2048), "o_proj": (2048, 4096), "qkv TP2": (2560, 2048),
        "o_proj TP2": (2048, 2048)}


def make(bm32, bm64, t_small, t_big, gth, st_small):
    def rule(m, n, k):
        bm = (8 if m <= 8 else 16 if m <= 16 else bm32 if m <= 32 else bm64 if m <= 64
              else 64 if m <= 256 else 128)
        programs = (n // 64) * -(-m // bm)
        g = 2 if programs <= gth else 1
        st = 2 if bm == 128 else (st_small if bm <= 16 else 3)
        slots = t_small if bm <= 16 else t_big
        s = 1
        while s < 8 and programs * s * 2 <= slots and k % (128 * g * s * 2) == 0:
            s *= 2
        return (bm, 64, st, g, s, False)
    return rule


scores = []
for p in itertools.product((16, 32), (32, 64), (264, 396, 528, 1056), (132, 264, 396),
                           (64, 132, 264), (3, 4)):
    rule = make(*p)
    regret = [t[c] / min(t.values()) if (c := rule(m, *dims[s])) in t else 9
              for (s, m), t in cells.items()]
    scores.append((sum(regret) / len(regret), max(regret), p))
scores.sort()
for s in scores[:5]:
    print(f"mean {s[0]:.3f} worst {s[1]:.2f} (bm32, bm64, T_small, T_big, gth, st_small) = {s[2]}")
rule = make(*scores[0][2])
for (shape, m), t in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    c, b = rule(m, *dims[shape]), min(t, key=t.get)
    print(f"{shape:11s} M={m:3d} rule {c[:5]} {t[c]:5.1f} us, best {b[:5]} {t[b]:5.1f} us, "
          f"{t[c] / t[b]:.2f}x; bf16 {ref[(shape, m)][0]:.1f}, before {ref[(shape, m)][1]:.1f}")
