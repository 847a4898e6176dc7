"""The Gluon tile sweep of qarl_kernels.tune at the cases below 16 tokens per expert."""
import qarl_kernels.tune as t

if __name__ == "__main__":
    t.GLUON_CASES = [c for c in t.GLUON_CASES if c[4] == 1 or (c[1] == 128 and c[4] == 8)
                     ]
    t.main(["--only", "w4a16-gluon"])
