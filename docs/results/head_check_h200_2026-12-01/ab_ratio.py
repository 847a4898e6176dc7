"""Calls 2-3: this kernel's time against 5cc1bea's in the decode tables (columns "this us" and
"w4a16_gemm us"). Usage: python ab_ratio.py call2_decode.txt call3_decode.txt"""
import statistics, sys
def rows(path):
    out=[]
    for line in open(path):
        c=[x.strip() for x in line.split('|')]
        if len(c)==18 and c[1].isdigit():
            try: out.append((c[0],c[1],float(c[8]),float(c[11])))
            except ValueError: pass
    return out
for path in sys.argv[1:]:
    r=rows(path); q=[o/t for _,_,t,o in r]
    ep8=[o/t for s,_,t,o in r if 'EP8' in s]
    print(path.split('/')[-1], len(r), f"old/this median {statistics.median(q):.3f} min {min(q):.3f} max {max(q):.3f}; EP8 rows median {statistics.median(ep8):.3f} min {min(ep8):.3f}")
    for x in sorted(r,key=lambda x:x[3]/x[2])[:4]: print("   ", x, f"{x[3]/x[2]:.3f}")
