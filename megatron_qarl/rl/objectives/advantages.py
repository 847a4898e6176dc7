"""Group-normalised advantages (GRPO): each response is scored against the other responses
to the same prompt, so no value model is needed."""
import torch
from torch import Tensor


def group_normalized_advantages(rewards: Tensor, group_size: int, normalize_std: bool = True,
                                eps: float = 1e-6) -> Tensor:
    """A_i = (R_i - mean of its group) [/ (std of its group + eps)], fp32 [N].

    rewards [N] holds the group_size responses of each prompt contiguously. std is the
    unbiased (Bessel-corrected) one; a group whose rewards are all equal gets A = 0 whichever
    way. normalize_std=False keeps the raw centred reward (Dr. GRPO), which does not up-weight
    prompts whose rewards barely vary.
    """
    if rewards.dim() != 1:
        raise ValueError(f"rewards must be one value per response, shape (N,): got {tuple(rewards.shape)}")
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 2:
        raise ValueError(f"group_size (responses per prompt) must be an integer >= 2 for a group "
                         f"baseline: got {group_size!r}")
    if rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size}: "
                         "pass the responses of each prompt contiguously, all groups complete")
    if not eps > 0:
        raise ValueError(f"eps must be > 0 to keep the division finite: got {eps!r}")
    groups = rewards.detach().float().reshape(-1, group_size)
    # an exactly constant group gets exact zeros: its fp32 mean can miss the value by an ulp,
    # and that residue over a std of rounding noise is not small (0.7 x 8 gave |A| = 0.056)
    constant = (groups == groups[:, :1]).all(dim=-1, keepdim=True)
    centred = torch.where(constant, 0.0, groups - groups.mean(dim=-1, keepdim=True))
    if normalize_std:
        centred = centred / (groups.std(dim=-1, keepdim=True) + eps)
    return centred.reshape(-1)
