"""Which files a `memorymanager run PATH...` runs.

A file is run as given. A folder runs every `*.yaml`, `*.yml` and `*.json` below it,
sorted by path (component by component, so a folder's files stay together); files and
folders whose names start with "." are skipped. A path that does not exist, or a folder
without scenario files, is reported as an invalid entry.
"""
from __future__ import annotations

import os
from typing import Iterable, Iterator, Optional

SCENARIO_SUFFIXES = (".yaml", ".yml", ".json")


def _walk(folder: str) -> list[str]:
    """Every scenario file below `folder`, hidden names skipped, in path order."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.startswith(".") and name.lower().endswith(SCENARIO_SUFFIXES):
                found.append(os.path.join(root, name))
    return sorted(found, key=lambda p: os.path.normpath(p).split(os.sep))


def collect_scenario_files(paths: Iterable[str]) -> Iterator[tuple[str, Optional[str]]]:
    """(path, None) for every file to run, or (path, problem) for a path that cannot be run."""
    for path in paths:
        if os.path.isdir(path):
            files = _walk(path)
            if not files:
                yield path, "no *.yaml, *.yml or *.json files in this folder"
            for file in files:
                yield file, None
        elif os.path.isfile(path):
            yield path, None
        else:
            yield path, "no such file or folder"
