"""Lines for a 100-column terminal: text wrapped at spaces, ANSI styles taking no room."""
from __future__ import annotations

import re

WIDTH = 100

_ANSI = re.compile(r"\033\[[0-9;]*m")


def visible_width(text: str) -> int:
    """The width of text on a terminal (ANSI styles take no room)."""
    return len(_ANSI.sub("", text))


def clip(text: str, indent: int) -> list[str]:
    """Wrap a long line at spaces to WIDTH columns, continuation lines indented further."""
    words, lines, line = text.split(" "), [], " " * indent
    for word in words:
        if visible_width(line) + visible_width(word) + 1 > WIDTH and line.strip():
            lines.append(line.rstrip())
            line = " " * (indent + 4)
        line += word + " "
    lines.append(line.rstrip())
    return lines
