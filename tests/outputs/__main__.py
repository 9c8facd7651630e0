"""Snapshots of everything `memorymanager run` prints and writes, to show a change left them alone.

    python -m tests.outputs save DIR            # run every case, write one file per output into DIR
    python -m tests.outputs compare DIR         # run again and compare with DIR (exit 1 on a difference)

The cases: the bundled suite (fixtures/scenarios) and seeded generated scenarios (tests/outputs/
generated.py), each through the human report, `-v`, `--json`, `--record` (the recorded files),
`--metrics`, and `--state-dir` (the checkpoint file left after every scenario). Temporary folder
names are replaced by a placeholder. Not part of the default test run (about a minute).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import sys
import tempfile

from tests.helpers.paths import FIXTURES
from tests.outputs.generated import scenarios

TIMED = re.compile(r"^(\w*_duration_\w*(?:_bucket|_sum)(?:\{[^}]*\})?) .*$", re.M)  # measured times vary
TEMP_NAME = re.compile(r"/tmp/[A-Za-z0-9_.-]*memorymanager-[A-Za-z0-9_]+|" + re.escape(tempfile.gettempdir()) + r"/mmout-[A-Za-z0-9_]+")


def _cli(argv: list[str]) -> str:
    """`memorymanager ARGV` in this process: exit code, then stdout and stderr."""
    from memorymanager.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return f"exit {code}\n--- stdout\n{out.getvalue()}--- stderr\n{err.getvalue()}"


def _files(root: str) -> str:
    """Every file under `root` (sorted), with its bytes."""
    parts = []
    for folder, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="surrogateescape", newline="") as fh:
                parts.append(f"=== {os.path.relpath(path, root)}\n{fh.read()}")
    return "\n".join(parts)


def collect() -> dict[str, str]:
    """Output name -> text, for every case."""
    results: dict[str, str] = {}
    work = tempfile.mkdtemp(prefix="mmout-")
    try:
        suite = os.path.join(work, "scenarios")
        shutil.copytree(FIXTURES / "scenarios", suite)
        generated = os.path.join(work, "generated")
        os.makedirs(generated)
        shutil.copytree(FIXTURES / "machines", os.path.join(work, "machines"))
        for name, doc in scenarios().items():
            with open(os.path.join(generated, name), "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1)
        for label, root in (("suite", suite), ("generated", generated)):
            results[f"{label}.human"] = _cli(["run", root])
            results[f"{label}.verbose"] = _cli(["run", "-v", root])
            results[f"{label}.json"] = _cli(["run", "--json", root])
            metrics = os.path.join(work, f"{label}.metrics")
            results[f"{label}.metrics"] = _cli(["run", "--metrics", metrics, root]) + _files_of(metrics)
            recorded = os.path.join(work, f"{label}-recorded")
            shutil.copytree(root, recorded)
            results[f"{label}.record"] = _cli(["run", "--record", recorded]) + _files(recorded)
            shutil.rmtree(recorded)
            states = []
            for folder, _, names in sorted(os.walk(root)):
                for name in sorted(names):
                    state_dir = os.path.join(work, "state")
                    path = os.path.join(folder, name)
                    text = _cli(["run", "--state-dir", state_dir, path])
                    states.append(f"##### {os.path.relpath(path, root)}\n{text}{_files(state_dir)}")
                    shutil.rmtree(state_dir, ignore_errors=True)
            results[f"{label}.state"] = "\n".join(states)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {key: TIMED.sub(r"\1 TIME", TEMP_NAME.sub("TMP", text.replace(work, "WORK"))) for key, text in results.items()}


def _files_of(path: str) -> str:
    if not os.path.exists(path):
        return "(no file)\n"
    with open(path, encoding="utf-8", newline="") as fh:
        return "=== file\n" + fh.read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.outputs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("save", "compare"))
    parser.add_argument("folder")
    args = parser.parse_args(argv)
    outputs = collect()
    if args.action == "save":
        os.makedirs(args.folder, exist_ok=True)
        for key, text in outputs.items():
            with open(os.path.join(args.folder, key), "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
                fh.write(text)
        print(f"saved {len(outputs)} outputs ({sum(len(t) for t in outputs.values()):,} characters) in {args.folder}")
        return 0
    differ = 0
    for key, text in outputs.items():
        path = os.path.join(args.folder, key)
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as fh:
            before = fh.read()
        if before == text:
            print(f"same     {key} ({len(text):,} characters)")
            continue
        differ += 1
        old, new = before.splitlines(), text.splitlines()
        line = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        print(f"DIFFERS  {key}: first at line {line + 1}")
        print(f"   before: {old[line] if line < len(old) else '(end)'}"[:300])
        print(f"   after:  {new[line] if line < len(new) else '(end)'}"[:300])
    print(f"{len(outputs) - differ} of {len(outputs)} outputs identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
