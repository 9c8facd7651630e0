"""A PNG of explain's HTML picture, rendered by headless chromium (the README's image).

    python -m memorymanager.explain.png SCENARIO --step N [--what-if] -o docs/explain-step.png [--size 1100x620]

The page is exactly what `memorymanager explain SCENARIO --step N [--what-if] --format html` writes;
chromium (Debian's `chromium` package) takes the screenshot. The browser test drives
chromium through `run_chromium` too.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence


class BrowserError(Exception):
    """chromium is missing or failed; str() says which."""


def find_chromium() -> Optional[str]:
    """The chromium binary on PATH, if any."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_chromium(binary: str, profile: Path, size: tuple[int, int], *args: str,
                 timeout: float = 90) -> subprocess.CompletedProcess:
    """Headless chromium with its own profile folder (so other runs on the machine do not interfere)."""
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--disable-extensions", f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def screenshot(page_html: str, output: Path, size: tuple[int, int]) -> None:
    """Render an HTML page with chromium and save the PNG."""
    binary = find_chromium()
    if binary is None:
        raise BrowserError("chromium not found (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="memorymanager-png-") as folder:
        page = Path(folder) / "page.html"
        page.write_text(page_html, encoding="utf-8")
        shot = Path(folder) / "shot.png"
        result = run_chromium(binary, Path(folder) / "profile", size, f"--screenshot={shot}", page.as_uri())
        if result.returncode != 0 or not shot.exists():
            raise BrowserError(f"chromium failed: {result.stderr.strip()[-500:]}")
        shutil.copyfile(shot, output)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Write the PNG of one scenario step."""
    from memorymanager.explain.html import render_report
    from memorymanager.explain.walk import walk_scenario
    from memorymanager.runner.scenario import ScenarioError, load_scenario

    parser = argparse.ArgumentParser(prog="python -m memorymanager.explain.png")
    parser.add_argument("scenario")
    parser.add_argument("--step", type=int, required=True)
    parser.add_argument("--what-if", action="store_true", help="with part 6, as explain --what-if")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--size", default="1100x620", help="WIDTHxHEIGHT in pixels")
    args = parser.parse_args(argv)
    try:
        width, height = (int(v) for v in args.size.split("x"))
        scenario = load_scenario(args.scenario)
        view = walk_scenario(scenario, args.step, what_if=args.what_if)
        view.steps = [s for s in view.steps if s.index == args.step]
        if not view.steps:
            raise BrowserError(f"{args.scenario}: no step {args.step}")
        flag = " --what-if" if args.what_if else ""
        screenshot(render_report([view], title=f"memorymanager explain {args.scenario} --step {args.step}{flag}"),
                   Path(args.output), (width, height))
    except (ScenarioError, BrowserError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
