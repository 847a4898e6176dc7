"""Warp-stall samples of an Nsight Compute source page (`ncu -i R --page source --csv
--print-source sass`): per warp-specialized partition (a USETMAXREG line starts each), the
hottest SASS lines with their top stall reasons, and executed instructions by opcode.
Usage: sass_hot.py CSV"""
import collections
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if "Source" in r)
header, data = rows[head], rows[head + 1:]
col = {h: i for i, h in enumerate(header)}
stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
src = [r[col["Source"]].strip() for r in data]


def num(r, h):
    return int(float(r[col[h]] or 0))


def reasons(rs, top=5):
    total = collections.Counter()
    for r in rs:
        for h in stalls:
            total[h[6:]] += num(r, h)
    n = sum(total.values()) or 1
    return sum(total.values()), " ".join(f"{k} {100 * v / n:.0f}%" for k, v in total.most_common(top))


starts = [0] + [i for i, s in enumerate(src) if "USETMAXREG" in s] + [len(data)]
starts = sorted(set(starts))
for a, b in zip(starts, starts[1:]):
    n, text = reasons(data[a:b])
    print(f"lines {a}-{b}: {n} samples, {text}")
print("hottest lines:")
hot = sorted(range(len(data)), key=lambda i: -num(data[i], "Warp Stall Sampling (All Samples)"))
for i in sorted(hot[:30]):
    n, text = reasons([data[i]], 3)
    print(f"{i:5d} exec {data[i][col['Instructions Executed']]:>9s} samples {n:6d} {text:40s} "
          f"{src[i][:60]}")
ops = collections.Counter()
for r, s in zip(data, src):
    ops[s.split()[0] if s and not s.startswith("@") else " ".join(s.split()[:2])] += num(
        r, "Instructions Executed")
print("executed by opcode:", ", ".join(f"{k} {v}" for k, v in ops.most_common(25)))
