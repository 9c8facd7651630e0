"""The two Node methods the backend needs: `admit_on` (the Static policy's affinity pinned
to given NUMA nodes) and `adopt` (running pods made active after a restart, not re-placed)."""
from __future__ import annotations

import pytest

import memorymanager

from tests.resmgr.helpers import GI, MACHINE, MI, STATIC, pod
from memorymanager import resmgr as r
from tests.resmgr.helpers import claim, make_policy, result


@pytest.mark.parametrize("tm_policy", ["none", "best-effort", "single-numa-node"])
def test_admit_on_places_on_the_given_node(tm_policy: str) -> None:
    node = memorymanager.Node(MACHINE, {**STATIC, "topologyManagerPolicy": tm_policy})
    answer = node.admit_on(pod("p", "2Gi"), {"app": [1]})
    assert answer.admitted and answer.placements["app"].cpuset_mems == "1"
    assert node.admit(pod("q", "2Gi")).placements["app"].cpuset_mems == "0"  # the usual choice


def test_admit_on_leaves_the_affinity_store_alone() -> None:
    node = memorymanager.Node(MACHINE, STATIC)
    answer = node.admit_on(pod("p", "1Gi"), {"app": [1]})
    assert answer.placements["app"].cpuset_mems == "1"
    assert answer.placements["app"].numa_nodes == (0,)  # the topology manager stored its own hint
    assert node.admit(pod("q", "1Gi")).placements["app"].cpuset_mems == "0"  # the pin held for one admission


def test_adopt_keeps_restored_assignments(tmp_path) -> None:
    node = memorymanager.Node(MACHINE, STATIC, state_dir=tmp_path)
    node.admit(pod("a", "3Gi"))
    restarted = memorymanager.Node(MACHINE, STATIC, state_dir=tmp_path)
    restarted.adopt([pod("a", "3Gi")])
    restarted.admit(pod("b", "1Gi"))  # stale-state cleanup runs here
    assert restarted.free()[0]["memory"] == 4 * GI - 100 * MI
    forgetful = memorymanager.Node(MACHINE, STATIC, state_dir=tmp_path)
    forgetful.admit(pod("b", "1Gi"))  # without adoption, kubelet drops a as stale
    assert forgetful.free()[0]["memory"] == 7 * GI - 100 * MI


def test_bad_claim_arguments_are_clear(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    with pytest.raises(r.PolicyError, match="expected a ResourceClaim with a UID"):
        policy.allocate_claim("c", [result(0, GI)])  # type: ignore[arg-type]
    with pytest.raises(r.PolicyError, match=r"results\[0\]: expected a DeviceRequestAllocationResult, got map"):
        policy.allocate_claim(claim("c"), [{"device": "memory-numa0"}])  # type: ignore[list-item]
