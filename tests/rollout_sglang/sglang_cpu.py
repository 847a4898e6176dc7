"""SGLang 0.5.23's own weight-sync classes, importable without its GPU dependencies.

They are installed into a private directory (see install_sglang_cpu.sh; about 40 MB
downloaded, 20-40 s) the first time, then reused until the install script changes. A failed
install fails the tests that need the classes: they are not skipped."""
import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(__file__)
INSTALL_SCRIPT = os.path.join(HERE, "install_sglang_cpu.sh")
TARGET = os.environ.get("QARL_SGLANG_CPU_DIR",
                        os.path.expanduser("~/.cache/megatron-qarl/sglang-0.5.23-cpu"))


def ensure_sglang_path() -> str:
    """Install (once per version of the install script) and put on sys.path; returns the dir."""
    with open(INSTALL_SCRIPT, "rb") as f:
        marker = os.path.join(TARGET, ".complete-" + hashlib.sha1(f.read()).hexdigest()[:12])
    if not os.path.exists(marker):
        subprocess.run(["bash", INSTALL_SCRIPT, TARGET], check=True)
        open(marker, "w").close()
    if TARGET not in sys.path:
        sys.path.insert(0, TARGET)
    return TARGET
