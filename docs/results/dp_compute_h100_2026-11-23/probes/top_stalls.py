"""From `ncu --page source --csv --print-source sass`: the SASS lines with the most stall
samples, with the columns that name the stall reasons."""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
head_at = next(i for i, r in enumerate(rows) if "Source" in r)
header, body = rows[head_at], rows[head_at + 1:]
col = {name: i for i, name in enumerate(header)}
samples = next(n for n in header if n.startswith("Warp Stall Sampling (All"))
reasons = [n for n in header if n.startswith("stall_") or "Stall" in n and n != samples]


def num(r, name):
    try:
        return float(r[col[name]].replace(",", ""))
    except (ValueError, IndexError):
        return 0.0


total = sum(num(r, samples) for r in body)
print(f"{sys.argv[1]}: {len(body)} SASS lines, {total:.0f} stall samples; columns: {header}")
for r in sorted(body, key=lambda r: -num(r, samples))[:int(sys.argv[2]) if len(sys.argv) > 2 else 25]:
    share = 100 * num(r, samples) / max(total, 1)
    top = sorted(((num(r, n), n) for n in reasons), reverse=True)[:3]
    print(f"{share:5.1f}%  {r[col['Address']] if 'Address' in col else ''}  {r[col['Source']][:70]:70s}  "
          + ", ".join(f"{n}={v:.0f}" for v, n in top if v))
