"""docs/architecture.md maps every module: each .py file of the packages is named in its package's
section, and every .py file the page names exists."""
from __future__ import annotations

import re
from functools import lru_cache

import pytest

from tests.helpers.paths import REPO_ROOT

DOC = REPO_ROOT / "docs" / "architecture.md"
# section heading (its `### ` line contains this) -> the folder its module names are relative to
SECTIONS = {
    "`kubeinputs/`": "kubeinputs",
    "`topologymanager/`": "topologymanager",
    "`state/`": "state",
    "`memorymanager/*.py`": "memorymanager",
    "`cpumanager/`": "cpumanager",
    "`devicemanager/`": "devicemanager",
    "Layer 3": "memorymanager",
}
NAMED = re.compile(r"`([\w./-]+\.py)`")


@lru_cache(maxsize=None)
def _sections() -> dict[str, str]:
    """Folder -> the text of its sections under "What lives where" (both Layer 3 sections for memorymanager's
    sub-packages; `memorymanager/*.py` for its top-level modules, kept apart as "memorymanager/")."""
    text = DOC.read_text(encoding="utf-8")
    where = text[text.index("## What lives where"):text.index("## Upstream function -> Python")]
    found: dict[str, str] = {}
    for part in where.split("\n### ")[1:]:
        heading = part.splitlines()[0]
        keys = [key for key in SECTIONS if key in heading]
        assert len(keys) == 1, f"docs/architecture.md: section {heading!r} names no single package"
        folder = SECTIONS[keys[0]] + ("" if keys[0] == "Layer 3" else "/")
        found[folder] = found.get(folder, "") + part
    return found


def _modules() -> list[tuple[str, str]]:
    """(section folder, path relative to it) of every module the page must name."""
    modules = []
    for folder in ("kubeinputs", "topologymanager", "state", "cpumanager", "devicemanager", "memorymanager"):
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            rel = path.relative_to(REPO_ROOT / folder)
            if path.name == "__init__.py" or "protos" in rel.parts:
                continue
            if folder == "memorymanager" and (len(rel.parts) > 1 or path.name == "__main__.py"):
                modules.append(("memorymanager", rel.as_posix()))  # Layer 3: a sub-package, the command
            else:
                modules.append((folder + "/", rel.as_posix()))
    return modules


@pytest.mark.parametrize("section,module", _modules(), ids=lambda v: v)
def test_every_module_is_named_in_its_section(section, module):
    named = set(NAMED.findall(_sections().get(section, "")))
    full = f"{section.rstrip('/')}/{module}"
    assert module in named or full in named, f"docs/architecture.md does not name {full} in its section"


def test_every_named_module_exists():
    """A path is found from the repository or a package folder; a bare file name (a row of a folder's
    modules) in some folder of the packages."""
    text = DOC.read_text(encoding="utf-8")
    roots = [REPO_ROOT] + [REPO_ROOT / folder for folder in set(SECTIONS.values())]
    names = {path.name for root in roots[1:] for path in root.rglob("*.py")}
    missing = sorted({name for name in NAMED.findall(text)
                      if not (name in names if "/" not in name else any((root / name).is_file() for root in roots))})
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"
