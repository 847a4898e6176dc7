"""megatron-qarl: quantization-aligned RL (QaRL) for Megatron-Core MoE models.

The top-level `kernels/` folder holds the Triton kernels and their benchmarks. It is
installed under the import name `qarl_kernels` (package_dir mapping below) because the
import name `kernels` belongs to an unrelated Hugging Face package that transformers probes.
"""
from setuptools import find_packages, setup

setup(
    name="megatron-qarl",
    version="0.1.0",
    description="Quantization-aligned RL (QaRL, TBPO) for Megatron-Core MoE models",
    python_requires=">=3.10",
    packages=find_packages(include=["megatron_qarl", "megatron_qarl.*"])
    + ["qarl_kernels", "qarl_kernels.bench"],
    package_dir={"qarl_kernels": "kernels"},
    install_requires=[
        # 2.13.0 is the CPU wheel on the dev/CI disk; the GPU image brings its own torch.
        "torch>=2.9",
        "megatron-core==0.16.1",
        "numpy>=1.26",
        "safetensors>=0.4",
        "tqdm>=4.66",
        "math-verify==0.9.0",
    ],
    extras_require={
        "triton": ["triton>=3.6"],
        # compressed-tensors: the W4A16 tests pass with 0.18.0 (SGLang 0.5.23's pin) and 0.20.0
        "hf": ["transformers>=5.0", "compressed-tensors>=0.18,<0.21"],
        "sglang": ["sglang>=0.5.21,<0.6"],  # rollout/sglang/version.py's SUPPORTED_RANGE
        "te": ["transformer-engine[pytorch]>=2.12"],  # layers/te_fp8.py: MIN_TE_VERSION
        "wandb": ["wandb>=0.19"],
        # Muon (--optimizer muon) needs no extra: megatron_qarl/trainer/muon.py (no
        # emerging_optimizers release fits megatron-core 0.16.1; docs/training.md, "Muon").
        "parquet": ["pyarrow>=15"],
        "plot": ["matplotlib>=3.8"],
        "test": [
            "pytest>=8",
            "pytest-xdist>=3.6",  # the README test command runs two workers
            "pytest-timeout>=2.3",  # pytest.ini: a hung test fails instead of holding CI
            "triton>=3.6",
            "transformers>=5.0",
            "compressed-tensors>=0.18,<0.21",
        ],
    },
)
