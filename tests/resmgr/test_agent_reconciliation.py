"""Extended resources as the nri-plugins agent reconciles them (pkg/agent/node-extended-resources.go):
the rule table, and the phases of nri-plugins' own e2e test of it (balloons test19-pct, phase 1.5)."""
from __future__ import annotations

from typing import Optional

import pytest

from kubeinputs.quantity import Quantity, parse_quantity
from memorymanager import resmgr as r

from tests.resmgr.helpers import MACHINE

Q = parse_quantity
OWNED = "cpuclass.balloons.nri.io/*"
HP = "cpuclass.balloons.nri.io/pct-hp"


def quantities(doc: Optional[dict]) -> Optional[dict]:
    return None if doc is None else {k: (None if v is None else Q(v)) for k, v in doc.items()}


def texts(doc: dict) -> dict:
    return {k: str(v) for k, v in doc.items()}


@pytest.mark.parametrize("current, managed, after, patch", [
    # None or {} owns and publishes nothing: no patch at all
    ({"a.nri.io/x": "1"}, None, {"a.nri.io/x": "1"}, {}),
    ({"a.nri.io/x": "1"}, {}, {"a.nri.io/x": "1"}, {}),
    # a value publishes or replaces ...
    ({}, {"a.nri.io/x": "2"}, {"a.nri.io/x": "2"}, {"a.nri.io/x": "2"}),
    ({"a.nri.io/x": "1"}, {"a.nri.io/x": "2"}, {"a.nri.io/x": "2"}, {"a.nri.io/x": "2"}),
    # ... and an unchanged value is not rewritten (same quantity, same canonical text)
    ({"a.nri.io/x": "1k"}, {"a.nri.io/x": "1000"}, {"a.nri.io/x": "1k"}, {}),
    # None on a plain name removes it when present, and is fine when absent
    ({"a.nri.io/x": "1", "a.nri.io/y": "1"}, {"a.nri.io/x": None}, {"a.nri.io/y": "1"}, {"a.nri.io/x": None}),
    ({"a.nri.io/y": "1"}, {"a.nri.io/x": None}, {"a.nri.io/y": "1"}, {}),
    # a pattern removes every matching name not published
    ({"a.nri.io/x": "1", "a.nri.io/y": "1", "b.nri.io/y": "1"}, {"a.nri.io/*": None},
     {"b.nri.io/y": "1"}, {"a.nri.io/x": None, "a.nri.io/y": None}),
    ({"a.nri.io/x": "1", "a.nri.io/y": "1"}, {"a.nri.io/*": None, "a.nri.io/y": "3"},
     {"a.nri.io/y": "3"}, {"a.nri.io/y": "3", "a.nri.io/x": None}),
    # Go path.Match in a pattern (a key with '*'): '?' and classes are wildcards, '*' does not cross '/'
    ({"a.nri.io/x1": "1", "a.nri.io/x22": "1"}, {"*.nri.io/x?": None}, {"a.nri.io/x22": "1"}, {"a.nri.io/x1": None}),
    ({"a.nri.io/c0": "1", "a.nri.io/c7": "1", "a.nri.io/d0": "1"}, {"*.nri.io/[c][0-3]": None},
     {"a.nri.io/c7": "1", "a.nri.io/d0": "1"}, {"a.nri.io/c0": None}),
    # a key without '*' is a plain name, even with '?' in it (as the agent decides)
    ({"a.nri.io/x1": "1"}, {"a.nri.io/x?": None}, {"a.nri.io/x1": "1"}, {}),
    ({"a.nri.io/c0": "1", "a.nri.io/d0": "1"}, {"a.nri.io/[^c]*": None}, {"a.nri.io/c0": "1"}, {"a.nri.io/d0": None}),
    ({"x.nri.io/a": "1", "y.x.nri.io/a": "1"}, {"*/a": None}, {}, {"x.nri.io/a": None, "y.x.nri.io/a": None}),
    ({"a.nri.io/x": "1"}, {"*": None}, {"a.nri.io/x": "1"}, {}),  # '*' stops at '/': matches no resource name
    # only *.nri.io/* can ever change: publishing, removing or a pattern elsewhere does nothing
    ({"example.com/gpu": "7"}, {"example.com/gpu": "9"}, {"example.com/gpu": "7"}, {}),
    ({"example.com/gpu": "7"}, {"example.com/gpu": None}, {"example.com/gpu": "7"}, {}),
    ({"example.com/gpu": "7", "a.nri.io/x": "1"}, {"*/*": None}, {"example.com/gpu": "7"}, {"a.nri.io/x": None}),
    ({"nri.io/x": "1"}, {"nri.io/*": None, "nri.io/y": "1"}, {"nri.io/x": "1"}, {}),
    # a pattern with a value is skipped; the rest still applied
    ({"a.nri.io/x": "1"}, {"a.nri.io/*": "5", "b.nri.io/y": "2"}, {"a.nri.io/x": "1", "b.nri.io/y": "2"},
     {"b.nri.io/y": "2"}),
    # a malformed pattern matches nothing; the rest still applied
    ({"a.nri.io/x": "1", "b.nri.io/[": "1"}, {"b.nri.io/[*": None, "a.nri.io/*": None}, {"b.nri.io/[": "1"},
     {"a.nri.io/x": None}),
])
def test_reconciliation_rules(current: dict, managed: Optional[dict], after: dict, patch: dict) -> None:
    cur = quantities(current)
    before = dict(cur)
    got = r.extended_resources_patch(cur, quantities(managed))
    assert got.merge_patch() == {"status": {"capacity": {k: (None if v is None else str(Q(v))) for k, v in patch.items()}}}
    assert bool(got) == bool(patch)
    assert texts(r.reconcile_extended_resources(cur, quantities(managed))) == texts(quantities(after))
    assert cur == before  # pure


def test_refusals_are_logged(caplog) -> None:
    with caplog.at_level("ERROR", logger="memorymanager.resmgr"):
        r.extended_resources_patch({"b.nri.io/[": Q("1")},
                                   {"a.nri.io/*": Q("1"), "example.com/x": Q("1"), "example.com/y": None,
                                    "b.nri.io/[*": None})
    assert "ignoring extended resource 'a.nri.io/*': wildcards are only allowed on owned" in caplog.text
    assert "refusing to publish extended resource 'example.com/x': name does not match '*.nri.io/*'" in caplog.text
    assert "refusing to remove extended resource 'example.com/y'" in caplog.text
    assert "invalid extended resources glob pattern 'b.nri.io/[*': syntax error in pattern" in caplog.text


class BalloonsLike:
    """The ownership a balloons policy declares: its whole cpuclass domain, the HP class published only
    when its configuration says so (what `GetExtendedResources` returns in each phase)."""

    def __init__(self, publish: bool) -> None:
        self.publish = publish

    def get_extended_resources(self) -> dict[str, Optional[Quantity]]:
        out: dict[str, Optional[Quantity]] = {OWNED: None}
        if self.publish:
            out[HP] = Q("4")
        return out


class Agent:
    """The agent's reconciler on one Node's status.capacity, recording every patch it sends."""

    def __init__(self, capacity: dict[str, Quantity]) -> None:
        self.capacity = capacity
        self.patches: list[dict] = []

    def reconcile(self, policy: BalloonsLike) -> None:
        patch = r.extended_resources_patch(self.capacity, policy.get_extended_resources())
        if patch:
            self.patches.append(patch.merge_patch())
            self.capacity = patch.apply(self.capacity)


def test_e2e_phases() -> None:
    """Phase 1.5 of nri-plugins' test19-pct, step by step, on an in-memory Node."""
    node = Agent({"cpu": Q("16"), "memory": Q("64Gi")})
    # launch with a publishing configuration: the resource appears
    node.reconcile(BalloonsLike(publish=True))
    assert str(node.capacity[HP]) == "4"
    # the periodic resync with nothing changed sends nothing
    node.reconcile(BalloonsLike(publish=True))
    assert len(node.patches) == 1
    # in-process reconfiguration to a non-publishing configuration: removed without a restart
    node.reconcile(BalloonsLike(publish=False))
    assert HP not in node.capacity
    # and back: published again
    node.reconcile(BalloonsLike(publish=True))
    assert str(node.capacity[HP]) == "4"
    # the plugin terminates (it removes nothing on shutdown); someone leaves an orphan in the owned
    # domain and an unrelated resource outside *.nri.io/*
    node.capacity["example.com/not-owned"] = Q("7")
    # a fresh, non-publishing launch reconciles the orphan away by domain ownership ...
    node.reconcile(BalloonsLike(publish=False))
    assert HP not in node.capacity
    # ... and never touches the unrelated resource, nor kubelet's own
    assert {k: str(v) for k, v in node.capacity.items()} == {"cpu": "16", "memory": "64Gi",
                                                            "example.com/not-owned": "7"}
    assert node.patches == [
        {"status": {"capacity": {HP: "4"}}},
        {"status": {"capacity": {HP: None}}},
        {"status": {"capacity": {HP: "4"}}},
        {"status": {"capacity": {HP: None}}},
    ]


def test_kubelet_backend_owns_nothing(tmp_path) -> None:
    policy = r.new_policy(r.KubeletBackend(), r.ContainerCache(str(tmp_path)), r.Options(), MACHINE)
    policy.start({"memoryManagerPolicy": "None"})
    assert policy.get_extended_resources() == {}
    assert not policy.extended_resources_patch({"a.nri.io/x": Q("1")})
