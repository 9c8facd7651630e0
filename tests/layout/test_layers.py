"""Dependencies point down only: kubeinputs/ (layer 1) -> the managers (layer 2) -> node & tools (layer 3).

Every import of a module of the packages is read from its source (at module level or inside a function:
both tie the layers); the package faces (`__init__.py`, `__main__.py`) only hand names on and are not
checked."""
from __future__ import annotations

import ast
from typing import Optional

import pytest

from tests.helpers.paths import REPO_ROOT

MANAGERS = ("topologymanager", "state", "cpumanager", "devicemanager", "memorymanager")
TOOLS = ("memorymanager.node", "memorymanager.runner", "memorymanager.explain", "memorymanager.server",
         "memorymanager.resmgr", "memorymanager.fleet", "memorymanager.cli")


def layer(module: str) -> Optional[int]:
    """1, 2 or 3 for a module of the packages (by dotted name), None for anything else."""
    if module.split(".")[0] == "kubeinputs":
        return 1
    if any(module == tool or module.startswith(tool + ".") for tool in TOOLS):
        return 3
    return 2 if module.split(".")[0] in MANAGERS else None


def _sources() -> list[str]:
    return sorted(str(path.relative_to(REPO_ROOT)) for package in ("kubeinputs", *MANAGERS)
                  for path in (REPO_ROOT / package).rglob("*.py")
                  if path.name not in ("__init__.py", "__main__.py") and "protos" not in path.parts)


def test_layer_of_names():
    assert [layer(m) for m in ("kubeinputs.pod", "cpumanager.manager", "memorymanager.hints",
                               "memorymanager.node.api", "memorymanager.cli.app", "grpc")] == [1, 2, 2, 3, 3, None]


@pytest.mark.parametrize("source", _sources())
def test_no_import_points_up(source):
    own = layer(source[:-3].replace("/", "."))
    tree = ast.parse((REPO_ROOT / source).read_text(encoding="utf-8"))
    upward = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        upward += [f"line {node.lineno}: {name}" for name in names if (layer(name) or 0) > own]
    assert not upward, f"{source} (layer {own}) imports from a higher layer: {upward}"
