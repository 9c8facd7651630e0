"""The README's ten-line API example runs and prints what the README says it prints."""
import contextlib
import io
import os
import re

from tests.helpers.paths import REPO_ROOT


def test_readme_api_example_prints_its_comment(monkeypatch):
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Would kubelet admit this pod on this node, and where?"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    expected = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    monkeypatch.chdir(REPO_ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().splitlines() == expected
