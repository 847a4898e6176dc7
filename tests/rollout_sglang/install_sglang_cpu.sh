#!/usr/bin/env bash
# SGLang's pure-Python weight-sync classes for the CPU tests, WITHOUT its GPU dependencies.
# `pip install sglang` would pull a CUDA torch, flashinfer, sgl-kernel...; the modules the
# tests use (sglang.srt.weight_sync.tensor_bucket, sglang.srt.utils.MultiprocessingSerializer
# and its SafeUnpickler) import with the package itself plus these small pure/abi3 wheels.
# Installed into a private target dir, so no other code sees an importable `sglang`.
set -euo pipefail
target=${1:?usage: install_sglang_cpu.sh TARGET_DIR}
pip install --quiet --disable-pip-version-check --no-deps --target "$target" \
  "sglang==0.5.23" pybase64 pillow starlette msgspec pyzmq aiohttp multidict yarl propcache \
  aiohappyeyeballs aiosignal frozenlist orjson requests urllib3 certifi ipython traitlets attrs
