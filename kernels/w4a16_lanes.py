"""The W4A16 codes in the Gluon kernel's lane order, kept beside the serving layout.

The wgmma A operand gives lane q of each quad the input pairs (2q, 2q + 1) of every 8-input word.
From the serving layout (nibble j of word w = input 8w + j) each thread therefore read every
word of its rows and picked its byte out with a byte permute: four times the shared-memory
reads, and a permute and a shift per A register. In lane order, within each row's 128-input
block (16 words), word 4q + 2h + i holds lane q's pairs of half h (inputs 64h..64h + 63) for the
half's words 4i..4i + 3: pair j (inputs 64h + 8(4i + j) + 2q, +1) at bits 4j and 16 + 4j. A
thread reads its four words of a block in one 16-byte load, and pair j is
(word >> 4j) & 0x000F000F, one AND-OR away from bf16.

The learner's fused quantizer writes them beside the codes for stacked experts on Hopper
(w4a16_quantize), once per optimizer step, even for a step whose calls all dequantize instead
(2048 rows an expert or more: the memory below for nothing). Elsewhere (dense weights, the
rollout engine's weights, each version once) the first eager call with a weight at a batch size
the kernel takes makes them here (w4a16_gemm makes them there even when that eager call runs the
Triton kernel, so that a CUDA graph captured next finds them). Either way 0.5 B/param of memory
beside the codes, kept on the QuantizedWeight. Publishers and exporters keep reading the
serving layout.
"""
import torch


def to_lane_order(data: torch.Tensor) -> torch.Tensor:
    """Serving-layout int32 codes [..., out, in / 8] -> the same nibbles in lane order."""
    *lead, rows, words = data.shape
    if words % 16:
        raise ValueError(f"W4A16 codes with {words * 8} inputs per row: lane order works on "
                         f"whole 128-input blocks")
    # byte q of word 8h + 4i + j of each block holds the pair of lane q; gather the four bytes
    # of one (q, h, i) into a word (byte j), then move their nibbles to bits 4j and 16 + 4j
    pairs = data.contiguous().view(torch.uint8).view(*lead, rows, words // 16, 2, 2, 4, 4)
    base = len(lead) + 2
    gathered = pairs.permute(*range(base), base + 3, base, base + 1, base + 2)
    gathered = gathered.contiguous().view(torch.int32).view(data.shape)
    return _nibbles_at_0_4_8_12(gathered) | (_nibbles_at_0_4_8_12(gathered >> 4) << 16)


def _nibbles_at_0_4_8_12(word: torch.Tensor) -> torch.Tensor:
    """The nibbles at bits 0, 8, 16 and 24 of each word, moved to bits 0, 4, 8 and 12."""
    word = word & 0x0F0F0F0F
    word = (word | (word >> 4)) & 0x00FF00FF
    return (word | (word >> 8)) & 0xFFFF


def has_lane_codes(qweight) -> bool:
    memo = qweight.lane_codes
    return memo is not None and memo[0] == qweight.data._version


def lane_codes(qweight) -> torch.Tensor:
    """qweight's codes in lane order, made once per QuantizedWeight (and again if its codes were
    written in place since). Made inside a CUDA-graph capture, the reorder would be recorded and
    replayed with every call: w4a16_gemm makes it on eager calls and never in capture."""
    if not has_lane_codes(qweight):
        with torch.no_grad():
            keep_lane_codes(qweight, to_lane_order(qweight.data))
    return qweight.lane_codes[1]


def keep_lane_codes(qweight, lanes: torch.Tensor) -> None:
    """lanes (qweight's codes now, in lane order) as its memo; the third item will hold the
    Gluon kernel's TMA descriptors of them, by box."""
    qweight.lane_codes = (qweight.data._version, lanes, {})
