"""Writes .gpu/_old_gh.py (kernels/gluon_hopper.py at 33aba43: one table entry per thread) and
.gpu/_w4g_old.py (kernels/w4a16_gluon.py as it is, taking its tables from _old_gh), for
tables_ab.py. Run from the repository root."""
import subprocess

old = subprocess.run(["git", "show", "33aba43:kernels/gluon_hopper.py"], capture_output=True,
                     text=True, check=True).stdout
open(".gpu/_old_gh.py", "w").write(old)
src = open("kernels/w4a16_gluon.py").read()
src = src.replace("from . import", "from qarl_kernels import")
src = src.replace("from .gluon_hopper import", "from _old_gh import")
src = src.replace("from .", "from qarl_kernels.")
open(".gpu/_w4g_old.py", "w").write(src)
