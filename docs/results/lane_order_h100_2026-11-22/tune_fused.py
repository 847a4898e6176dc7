"""The Gluon tile sweep of qarl_kernels.tune (fused fc1 + SwiGLU with register caps) at W13 decode
sizes of few tokens per expert."""
import qarl_kernels.tune as t

if __name__ == "__main__":
    t.GLUON_CASES = [("W13 E128", 128, 1536, 2048, m) for m in (1, 8, 64, 256)] + [
        ("W13 TP2", 128, 768, 2048, 8), ("W13 EP8", 16, 1536, 2048, 8)]
    t.main(["--only", "w4a16-gluon"])
