"""The Gluon tile sweep of qarl_kernels.tune at the TP2 expert shape (E128, N=768, K=2048)."""
import qarl_kernels.tune as t

if __name__ == "__main__":
    t.GLUON_CASES = [("W13 TP2", 128, 768, 2048, m) for m in (8, 64, 256, 1024)]
    t.main(["--only", "w4a16-gluon"])
