"""Keeping `explain` outputs embedded in Markdown pages (docs/tutorial.md) equal to the command's.

A block is a marker line followed by a fenced `text` block:

    <!-- explain: fixtures/scenarios/tutorial/001-single-node-fit.yaml --step 1 -->
    ```text
    ...what `memorymanager explain fixtures/... --step 1` prints...
    ```

`python -m memorymanager.cli.embed_explain PAGE.md` rewrites every block with today's output
(run from the repository root, where the marker paths are relative to); the tutorial test
checks that nothing would change.
"""
from __future__ import annotations

import io
import re
import shlex
import sys
from typing import Optional, Sequence

MARKER = re.compile(r"^<!-- explain: (?P<args>.+?) -->\n```text\n(?P<body>.*?)^```$", re.M | re.S)


def command_output(args: Sequence[str]) -> str:
    """What `memorymanager explain ARGS` prints (text, no colour); raises on a non-zero exit."""
    from memorymanager.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", *args], out, err)
    if code != 0:
        raise RuntimeError(f"memorymanager explain {' '.join(args)}: exit {code}: {err.getvalue().strip()}")
    return out.getvalue()


def blocks(page: str) -> list[tuple[list[str], str]]:
    """(explain arguments, embedded text) of every block of a page."""
    return [(shlex.split(m.group("args")), m.group("body")) for m in MARKER.finditer(page)]


def refreshed(page: str) -> str:
    """The page with every block's text replaced by the command's output today."""
    return MARKER.sub(lambda m: f"<!-- explain: {m.group('args')} -->\n```text\n"
                                f"{command_output(shlex.split(m.group('args')))}```", page)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Rewrite the pages named on the command line."""
    for path in argv if argv is not None else sys.argv[1:]:
        with open(path, encoding="utf-8") as fh:
            page = fh.read()
        new = refreshed(page)
        if new != page:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(new)
            print(f"updated {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
