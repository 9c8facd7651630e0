"""The HTML report: self-contained, one bar group per NUMA node per step, machine-state bytes, size."""
from __future__ import annotations

import re
from html.parser import HTMLParser

from kubeinputs.synthetic_machine import synthetic_machine
from memorymanager.explain.html import render_report
from memorymanager.explain.walk import walk_scenario
from memorymanager.runner.scenario import Scenario, parse_scenario
from tests.explain.helpers import walk

GI = 1 << 30


class BarCollector(HTMLParser):
    """Per step (details data-step): the numa-node groups and their bars' data attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: dict[int, dict[str, list[dict]]] = {}
        self.step = None
        self.node = None
        self.pod_rects = 0
        self.failed_steps: list[int] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        a = dict(attrs)
        if tag == "details":
            self.step = int(a["data-step"])
            self.steps[self.step] = {}
            if "failed" in a.get("class", ""):
                self.failed_steps.append(self.step)
        elif tag == "g" and a.get("class") == "numa-node":
            self.node = a["data-node"]
            self.steps[self.step][self.node] = []
        elif tag == "g" and a.get("class") == "bar":
            self.steps[self.step][self.node].append(a)
        elif tag == "rect" and a.get("class", "").startswith("pod "):
            self.pod_rects += 1


def collect(page: str) -> BarCollector:
    parser = BarCollector()
    parser.feed(page)
    return parser


def assert_bars_match(parser: BarCollector, view) -> None:
    for step in view.steps:
        nodes = parser.steps[step.index]
        assert sorted(nodes, key=int) == sorted(step.machine_state or {}, key=int)
        for node_id, bars in nodes.items():
            tables = step.machine_state[node_id]["memoryMap"]
            assert sorted(b["data-resource"] for b in bars) == sorted(tables)
            for bar in bars:
                table = tables[bar["data-resource"]]
                assert int(bar["data-free"]) == table["free"]
                assert int(bar["data-reserved"]) == table["reserved"]
                assert int(bar["data-system-reserved"]) == table["systemReserved"]
                assert int(bar["data-total"]) == table["total"]


def test_tutorial_page_bars_hold_the_machine_state() -> None:
    view = walk("tutorial/002-spread-over-a-group.yaml")
    page = render_report([view])
    parser = collect(page)
    assert_bars_match(parser, view)
    assert parser.pod_rects == 2  # the 6Gi block on node 0 and on node 1
    assert "group 0-1" in page
    assert not re.search(r"""(src|href)=["']?https?:""", page)  # nothing from the network


def test_failed_expectation_is_highlighted(tmp_path) -> None:
    doc = {"name": "wrong", "machine": {"num_cores": 2, "memory_capacity": 8 * GI,
                                        "topology": [{"node_id": 0, "memory": 4 * GI}, {"node_id": 1, "memory": 4 * GI}]},
           "kubelet": {"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]},
           "steps": [{"admit": {"metadata": {"name": "p"}, "spec": {"containers": [
               {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}},
               "expect": {"admitted": False}}]}
    view = walk_scenario(parse_scenario(doc, str(tmp_path), "wrong.yaml"))
    parser = collect(render_report([view]))
    assert parser.failed_steps == [0]


def churn_scenario(steps: int) -> Scenario:
    """`steps` admit/remove steps on 8 NUMA nodes: pods of 1 to 9Gi (some spanning groups)."""
    machine = {"num_cores": 16, "memory_capacity": 64 * GI,
               "topology": [{"node_id": i, "memory": 8 * GI} for i in range(8)]}
    out = []
    for i in range(steps):
        if i % 4 == 3:
            out.append({"remove": {"pod": f"p{i - 2}"}})
        else:
            size = 1 + (i * 7) % 9
            out.append({"admit": {"metadata": {"name": f"p{i}"}, "spec": {"containers": [
                {"name": "app", "resources": {"limits": {"cpu": "1", "memory": f"{size}Gi"}}}]}}})
    doc = {"name": "churn", "machine": machine,
           "kubelet": {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort",
                       "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]},
           "steps": out}
    return parse_scenario(doc, ".", "churn.yaml")


def test_two_hundred_steps_on_eight_nodes_stay_small() -> None:
    scenario = churn_scenario(200)
    view = walk_scenario(scenario)
    page = render_report([view])
    size = len(page.encode())
    parser = collect(page)
    assert len(parser.steps) == 200
    assert all(len(nodes) == 8 for nodes in parser.steps.values())
    assert size < 2_600_000, size  # numbers on every bar (about 2.4 MB)
    assert page.count("<details") == 200 and page.count(" open>") <= 3


def test_shared_group_is_split_in_proportion_and_says_so() -> None:
    view = walk("memory/090-group-second-member.yaml")
    page = render_report([view])
    last = view.steps[-1]
    assert "about 2.9Gi here (split not recorded)" in page  # p1's 5Gi share of node 0's 4Gi reserved
    parser = collect(page)
    assert_bars_match(parser, view)
    reserved = sum(int(b["data-reserved"]) for n in parser.steps[last.index].values() for b in n)
    assert reserved == 7 << 30  # both pods' blocks on the group


def test_units() -> None:
    from memorymanager.explain.units import approx_bytes, fmt_bytes, fmt_nodes

    assert [fmt_bytes(n) for n in (0, 1536 << 10, 3996 << 20, 12345)] == ["0", "1536Ki", "3996Mi", "12345"]
    assert approx_bytes(3067833782) == "2.9Gi" and approx_bytes(2 << 30) == "2Gi"
    assert [fmt_nodes(x) for x in ([0, 1], [0, 2, 3], None)] == ["0-1", "0,2-3", "any"]


class PictureCollector(HTMLParser):
    """Per bar (step, node, resource): its data attributes, its frame's height, the refused request drawn on it
    and the numbers written under it; and, per step, whether the reason came before the picture."""

    def __init__(self) -> None:
        super().__init__()
        self.bars: dict[tuple[int, str, str], dict] = {}
        self.reason_first: dict[int, bool] = {}
        self.step = self.node = None
        self.bar = None
        self.in_num = False

    def handle_starttag(self, tag: str, attrs) -> None:
        a = dict(attrs)
        cls = a.get("class", "")
        if tag == "details":
            self.step = int(a["data-step"])
        elif tag == "p" and "reason" in cls.split():
            self.reason_first.setdefault(self.step, True)
        elif tag == "svg":
            self.reason_first.setdefault(self.step, False)
        elif tag == "g" and cls == "numa-node":
            self.node = a["data-node"]
        elif tag == "g" and cls == "bar":
            self.bar = self.bars[(self.step, self.node, a["data-resource"])] = {**a, "asks": [], "over": 0, "text": ""}
        elif tag == "rect" and cls == "frame":
            self.bar["frame"] = float(a["height"])
        elif tag == "rect" and cls == "ask":
            self.bar["asks"].append(int(a["data-request"]))
        elif tag == "rect" and cls == "ask-over":
            self.bar["over"] += 1
        elif tag == "text" and cls == "num":
            self.in_num = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "text":
            self.in_num = False

    def handle_data(self, data: str) -> None:
        if self.in_num and self.bar is not None:
            self.bar["text"] += data + " "


def collect_picture(page: str) -> PictureCollector:
    parser = PictureCollector()
    parser.feed(page)
    return parser


def test_the_refused_request_is_drawn_against_the_free_space_it_did_not_fit() -> None:
    from memorymanager.explain.units import fmt_bytes

    view = walk("tutorial/006-what-would-make-it-fit.yaml")
    parser = collect_picture(render_report([view], open_steps=3))
    refused = {node: bar for (step, node, _), bar in parser.bars.items() if step == 2}
    assert {node: bar["asks"] for node, bar in refused.items()} == {"0": [3 * GI], "1": [3 * GI]}
    assert all(bar["over"] == 1 for bar in refused.values())  # 3Gi is more than either node's free memory
    assert not any(bar["asks"] for (step, _, _), bar in parser.bars.items() if step != 2)  # admitted: nothing asked
    for bar in parser.bars.values():  # every bar shows its numbers
        assert f"free {fmt_bytes(int(bar['data-free']))}" in bar["text"]
        assert f"of {fmt_bytes(int(bar['data-allocatable']))}" in bar["text"]
    assert parser.reason_first == {0: True, 1: True, 2: True}


def test_every_resource_is_drawn_on_one_scale() -> None:
    view = walk("memory/141-hugepages-1Gi-run-out.yaml")
    parser = collect_picture(render_report([view]))
    for step in {s for s, _, _ in parser.bars}:
        bars = [b for (s, _, _), b in parser.bars.items() if s == step]
        assert len({b["data-resource"] for b in bars}) == 3  # memory and two hugepage sizes
        scales = {round(b["frame"] / int(b["data-total"]) * (1 << 30), 1) for b in bars}
        assert max(scales) - min(scales) <= 1.0, scales  # pixels per GiB, the same for every bar (rounding aside)
        memory = next(b for b in bars if b["data-resource"] == "memory")
        pages = next(b for b in bars if b["data-resource"] == "hugepages-1Gi")
        assert memory["frame"] > pages["frame"]  # a 4Gi memory bar is taller than a 1Gi hugepage bar


def test_the_allocatable_arithmetic_is_under_the_picture() -> None:
    page = render_report([walk("tutorial/001-single-node-fit.yaml")])
    assert "node 0: memory 4Gi - 0 - 100Mi = 3996Mi" in page and "allocatable = MemTotal - hugepages" in page


class _CPUBars(HTMLParser):
    """Per step, the cpu-node groups with their CPU bar's and device bars' data attributes and square classes."""

    def __init__(self) -> None:
        super().__init__()
        self.step, self.node = None, None
        self.nodes: dict[tuple, dict] = {}

    def handle_starttag(self, tag: str, attrs) -> None:
        a = dict(attrs)
        if tag == "details" and "data-step" in a:
            self.step = int(a["data-step"])
        elif tag == "g" and a.get("class") == "cpu-node":
            self.node = self.nodes.setdefault((self.step, a["data-node"]), {"cpu": None, "devices": [], "cells": []})
        elif tag == "g" and a.get("class") == "cpu-bar" and self.node is not None:
            self.node["cpu"] = {k[5:]: int(v) for k, v in a.items() if k.startswith("data-")}
        elif tag == "g" and a.get("class") == "device-bar" and self.node is not None:
            self.node["devices"].append({k[5:]: v for k, v in a.items() if k.startswith("data-")})
        elif tag == "rect" and self.node is not None and ("data-cpu" in a or "data-device" in a):
            self.node["cells"].append((a["class"].split()[1], a.get("data-cpu") or a.get("data-device")))


def cpu_bars(page: str) -> dict[tuple, dict]:
    """The CPU and device picture of a page, per (step, node)."""
    parser = _CPUBars()
    parser.feed(page)
    return parser.nodes


def test_cpu_and_device_bars_per_numa_node() -> None:
    """Per NUMA node the CPUs (reserved, held, free, the pod's) and devices (held, free, picked), as the explanation
    counted them; a memory-only page has none."""
    view = walk("devices/034-dual-socket-cpu-memory-gpu-aligned.yaml")
    nodes = cpu_bars(render_report([view], open_steps=1))
    first = {node: v for (step, node), v in nodes.items() if step == 0}
    assert first["0"]["cpu"] == {"cpus": 8, "reserved": 1, "exclusive": 0, "free": 1, "pod": 6}
    assert first["1"]["cpu"] == {"cpus": 8, "reserved": 0, "exclusive": 0, "free": 8, "pod": 0}
    assert [c for c in first["0"]["cells"] if c[0] in ("reserved", "pod")][:2] == [("reserved", "0"), ("pod", "1")]
    assert first["0"]["devices"] == [{"resource": "nvidia.com/gpu", "devices": "1", "held": "0", "free": "0",
                                      "picked": "1"}]
    assert ("picked", "g0") in first["0"]["cells"] and ("free", "g1") in first["1"]["cells"]
    memory_only = render_report([walk("tutorial/001-single-node-fit.yaml")])
    assert "cpu-picture" not in memory_only and ".cpu.reserved" not in memory_only
