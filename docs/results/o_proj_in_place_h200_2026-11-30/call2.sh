# session 58, call 2 (from the repository root, .whl carried): dense W4A16 through the WS
# kernel as one expert against the dense op and bf16 (dense_ws_probe.py); the o_proj input's
# layout as Megatron's attention makes it (q from a contiguous [s, b, heads, d])
D=docs/results/o_proj_in_place_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
python3 - <<'PY' 2>&1 | tee $OUT/call2_layout.txt
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
s, b, h, g, d = 512, 8, 32, 4, 128
q = torch.randn(s, b, h, d, device="cuda", dtype=torch.bfloat16)  # rotary/q-norm output
k, v = (torch.randn(s, b, g, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    o = F.scaled_dot_product_attention(*(t.permute(1, 2, 0, 3) for t in (q, k, v)),
                                       is_causal=True, enable_gqa=True)
x = o.permute(2, 0, 1, 3)
print("flash output strides", o.stride(), "-> [s, b, h, d] contiguous:", x.is_contiguous())
PY
timeout 420 python3 $D/dense_ws_probe.py 2>&1 | tee $OUT/call2_probe.txt | grep -v "by round"
