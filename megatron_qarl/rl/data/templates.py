"""Prompt templates: how a dataset's question becomes the text the policy continues."""
from __future__ import annotations

TEMPLATES = {
    "plain": "{prompt}",
    "qa": "Question: {prompt}\nAnswer: ",
    "boxed": "{prompt}\nPlease reason step by step, and put your final answer within "
             "\\boxed{{}}.\n",
}
# 'chat-boxed': the boxed instruction wrapped in the HF tokenizer's own chat template.
CHAT_TEMPLATES = ("chat-boxed",)
TEMPLATE_NAMES = tuple(TEMPLATES) + CHAT_TEMPLATES


def check_template(name: str, tokenizer_type: str) -> None:
    """Validate --prompt-template before any work: a known name or a format string."""
    if name in CHAT_TEMPLATES and tokenizer_type != "hf":
        raise ValueError(
            f"--prompt-template {name} needs a tokenizer with a chat template: add "
            f"--tokenizer-type hf --tokenizer-model PATH, or use one of {', '.join(TEMPLATES)}"
        )
    if name in TEMPLATE_NAMES:
        return
    if "{prompt}" not in name:
        raise ValueError(
            f"--prompt-template {name!r} is neither one of {', '.join(TEMPLATE_NAMES)} nor a "
            f"format string containing {{prompt}}"
        )
    try:
        name.format(prompt="x")
    except (KeyError, IndexError, ValueError) as err:
        raise ValueError(
            f"--prompt-template {name!r} is not a valid format string ({err}); "
            f"escape literal braces as {{{{ }}}}"
        ) from None


def render_prompt(name: str, prompt: str, tokenizer) -> str:
    if name in CHAT_TEMPLATES:
        return tokenizer.apply_chat_template(TEMPLATES["boxed"].format(prompt=prompt))
    return TEMPLATES.get(name, name).format(prompt=prompt)
