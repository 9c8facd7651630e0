"""Seeded scenarios that walk many paths of a long run: admissions that fit and that do not, init
containers, hugepages, injected hints, hint queries, whole and single-container removals, unknown
pods, restarts from the checkpoint (some with a changed configuration) and checks of the state."""
from __future__ import annotations

import random
from typing import Any, Optional

MACHINES = {"hugepages": "two-nodes-hugepages.json", "eight": "eight-nodes.json", "four": "four-nodes-distances.json"}


def _limits(rng: random.Random, hugepages: bool) -> dict[str, str]:
    limits = {"cpu": str(rng.choice([1, 2])), "memory": f"{rng.choice([64, 256, 512, 1536, 3072, 5120])}Mi"}
    if hugepages and rng.random() < 0.4:
        limits["hugepages-2Mi"] = f"{rng.choice([2, 64, 512])}Mi"
    if hugepages and rng.random() < 0.2:
        limits["hugepages-1Gi"] = "1Gi"
    return limits


def _container(rng: random.Random, name: str, hugepages: bool) -> dict:
    limits = _limits(rng, hugepages)
    if rng.random() < 0.1:  # burstable: requests below limits
        return {"name": name, "resources": {"requests": {"cpu": "1", "memory": "32Mi"}, "limits": limits}}
    return {"name": name, "resources": {"limits": limits}}


def _pod(rng: random.Random, name: str, hugepages: bool) -> dict:
    spec: dict[str, Any] = {"containers": [_container(rng, f"c{i}", hugepages) for i in range(rng.choice([1, 1, 2, 3]))]}
    if rng.random() < 0.25:
        spec["initContainers"] = [_container(rng, "init", hugepages)]
    return {"metadata": {"name": name}, "spec": spec}


def _hints(rng: random.Random, nodes: int) -> list[dict]:
    masks = rng.sample(range(1, 1 << nodes), k=min((1 << nodes) - 1, rng.choice([1, 2, 3])))
    return [{"numaAffinity": [n for n in range(nodes) if m >> n & 1], "preferred": m.bit_count() == 1} for m in masks]


def mixed(seed: int, machine: str, steps: int, policy: str, scope: str = "container",
          pod_level: bool = False, restart_policy: Optional[str] = None) -> dict:
    """A long scenario of random operations; expectations are light (the actual values are compared)."""
    rng = random.Random(seed)
    hugepages = machine == "hugepages"
    nodes = {"hugepages": 2, "eight": 8, "four": 4}[machine]
    kubelet: dict[str, Any] = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": policy,
                               "topologyManagerScope": scope,
                               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
    if pod_level:
        kubelet["featureGates"] = {"PodLevelResourceManagers": True}
    out: list[dict] = [{"start": {}, "expect": {"error": None}}]
    live: list[dict] = []
    for i in range(steps):
        roll = rng.random()
        if roll < 0.5 or not live:
            pod = _pod(rng, f"p{i}", hugepages)
            step: dict[str, Any] = {"admit": pod}
            if rng.random() < 0.3:
                hints = {"cpu": _hints(rng, nodes)}
                if scope == "pod":
                    step["providers"] = {"pod": hints}
                else:
                    step["providers"] = {"containers": {pod["spec"]["containers"][0]["name"]: hints}}
            live.append(pod)
        elif roll < 0.6:
            step = {"hints": _pod(rng, f"h{i}", hugepages)}
        elif roll < 0.8:
            pod = live.pop(rng.randrange(len(live)))
            step = {"remove": {"pod": pod["metadata"]["name"]}}
        elif roll < 0.86:
            pod = rng.choice(live)
            step = {"remove": {"pod": pod["metadata"]["name"], "container": pod["spec"]["containers"][-1]["name"]}}
        elif roll < 0.88:
            step = {"remove": {"pod": f"never-{i}"}}
        elif roll < 0.94:
            step = {"restart": {"kubelet": {"topologyManagerPolicy": restart_policy}} if restart_policy and rng.random() < 0.5
                    else {}}
        else:
            step = {"check": {}, "expect": {"entries": {}}}  # fails when anything is live: failures are output too
        out.append(step)
    return {"name": f"generated {machine} {policy} {scope} seed {seed}", "machine": f"../machines/{MACHINES[machine]}",
            "kubelet": kubelet, "steps": out}


def scenarios() -> dict[str, dict]:
    """File name -> scenario document."""
    return {
        "gen-hugepages-restricted.json": mixed(1, "hugepages", 160, "restricted", restart_policy="best-effort"),
        "gen-hugepages-pod-scope.json": mixed(2, "hugepages", 120, "single-numa-node", scope="pod"),
        "gen-hugepages-pod-level.json": mixed(3, "hugepages", 120, "best-effort", scope="pod", pod_level=True),
        "gen-eight-best-effort.json": mixed(4, "eight", 300, "best-effort", restart_policy="restricted"),
        "gen-four-single.json": mixed(5, "four", 200, "single-numa-node"),
    }
