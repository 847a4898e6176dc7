"""tools/ holds scripts, not a package: tests load one as the user runs it."""
import importlib.util
import os

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")


def load_tool(name: str):
    """tools/<name>.py as a module, without running its `__main__` block."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(TOOLS, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
