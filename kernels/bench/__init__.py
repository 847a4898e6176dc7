"""The kernels' benchmark, `python -m qarl_kernels.bench` (__main__.py): one module a table
family, cases.py their shapes and inputs, measure.py the timers, report.py the tables and the
checks against each reference."""
