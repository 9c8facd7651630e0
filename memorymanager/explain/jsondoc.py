"""The explanation as a stable JSON document for tools (schema: docs/explain.md).

Field names are the model's (`memorymanager.explain.model`), snake_case; every document
carries `schema_version`. Adding fields keeps the version; renaming or removing one
raises it.
"""
from __future__ import annotations

import json
from typing import Any

from memorymanager.explain.model import SCHEMA_VERSION, Explanation, ScenarioView, as_obj
from memorymanager.node.start_diagnosis import StartDiagnosis


def scenario_document(view: ScenarioView, only_step: int | None = None) -> dict[str, Any]:
    """`{schema_version, file, name, description, steps: [...]}`; with `only_step`, that step alone."""
    steps = [s for s in view.steps if only_step is None or s.index == only_step]
    return {
        "schema_version": SCHEMA_VERSION,
        "file": view.file,
        "name": view.name,
        "description": view.description,
        "steps": [as_obj(s) for s in steps],
    }


def node_document(root: str, explanation: Explanation) -> dict[str, Any]:
    """`{schema_version, node, explanation}` for one pod on a live node."""
    return {"schema_version": SCHEMA_VERSION, "node": root, "explanation": as_obj(explanation)}


def explanation_document(explanation: Explanation) -> dict[str, Any]:
    """`{schema_version, explanation}` for one pod on a served node (the Explain RPC)."""
    return {"schema_version": SCHEMA_VERSION, "explanation": as_obj(explanation)}


def start_document(source: dict[str, Any], diagnosis: StartDiagnosis) -> dict[str, Any]:
    """`{schema_version, source, start}` for `explain --start` (source: the scenario, node root or files read)."""
    return {"schema_version": SCHEMA_VERSION, "source": source, "start": as_obj(diagnosis)}


def dumps(document: dict[str, Any]) -> str:
    """Indented JSON with a final newline."""
    return json.dumps(document, indent=2) + "\n"
