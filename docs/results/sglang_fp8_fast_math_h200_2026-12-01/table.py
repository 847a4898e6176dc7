"""The hardware reciprocal (rcp.approx.ftz.f32, which div.approx.ftz.f32 multiplies by: call 1)
of every bf16 significand 1 + k/128 and of the amax floor 1e-10, printed as fp32 bits; then
checks that t[k] * 2**-e, flushed to zero below 2**-126, is the hardware's reciprocal of every
positive normal bf16 value 1.k * 2**e."""
import torch

from probe import approx, bits


def main():
    sig = 1.0 + torch.arange(128, dtype=torch.float32) / 128
    rcp, _, _ = approx(torch.cat([sig, torch.tensor([1e-10])]))
    table, eps = rcp[:128], rcp[128]
    print("RCP_SIGNIFICANDS = (" + ", ".join(f"0x{v:08x}" for v in bits(table).tolist()) + ")")
    print(f"RCP_EPS = 0x{bits(eps).item():08x}  # {eps.item()!r}")
    print("differ from fp32(1/s):", int((bits(table) != bits(1.0 / sig)).sum()), "of 128;",
          "ulps:", sorted(set((bits(table) - bits(1.0 / sig)).tolist())))
    e = torch.arange(1, 255, dtype=torch.int32)[:, None]
    k = torch.arange(128, dtype=torch.int32)[None, :]
    vals = ((e << 23) | (k << 16)).view(torch.float32)
    hw, div, _ = approx(vals.flatten())
    pow2 = torch.where(e < 254, (254 - e) << 23, 0).view(torch.float32)
    model = table[None, :] * pow2
    model = torch.where(model < 2.0 ** -126, 0.0, model).flatten()
    print("model vs rcp.approx.ftz over", vals.numel(), "bf16 values: differ",
          int((bits(model) != bits(hw)).sum()), "; 448 * model vs div.approx.ftz(448, a): differ",
          int((bits(448.0 * model) != bits(div)).sum()))


if __name__ == "__main__":
    main()
