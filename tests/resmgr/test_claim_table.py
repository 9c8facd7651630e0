"""The claim table: every rule of `AllocateClaim`/`ReleaseClaim` as one row of steps, made as the
resource manager makes them (DRA prepare/unprepare under its lock), with the NUMA memory left free
and the claim records held after them."""
from __future__ import annotations

from typing import Optional

import pytest

from memorymanager import resmgr as r

from tests.resmgr.helpers import GI, MI, claim, free, make_policy, result

NODE0 = 8 * GI - 100 * MI  # node 0's allocatable memory (100Mi reserved)
CFG = r.ClaimConfig
DRV = r.DEFAULT_DRIVER


def unsized(numa: int, request: str = "mem") -> r.DeviceRequestAllocationResult:
    return r.DeviceRequestAllocationResult(request, DRV, "pool0", r.device_name(numa))


def edits(nodes: str, n: int = 1) -> list[r.ContainerEdits]:
    return [r.ContainerEdits((f"CLAIMED_MEMS={nodes}",))] * n


# one row: (steps, free memory after, claim UIDs held after); a step is
# ("prepare", uid, configs, results, expected edits or the start of the error) or ("unprepare", uid)
TABLE: dict[str, tuple[list[tuple], dict[int, int], list[str]]] = {
    "one result: reserved on its node, one edit": (
        [("prepare", "a", (), [result(1, 3 * GI)], edits("1"))], {0: NODE0, 1: 5 * GI}, ["a"]),
    "edits[i] belongs to results[i]; every edit names all the claim's nodes": (
        [("prepare", "a", (), [result(0, GI, "x"), result(1, GI, "y")], edits("0-1", 2))],
        {0: NODE0 - GI, 1: 7 * GI}, ["a"]),
    "prepared again (a second pod): the same edits, nothing more taken": (
        [("prepare", "a", (), [result(1, 3 * GI)], edits("1")),
         ("prepare", "a", (), [result(0, 5 * GI)], edits("1"))], {0: NODE0, 1: 5 * GI}, ["a"]),
    "no results: an error, nothing recorded": (
        [("prepare", "a", (), [], "claim default/claim-a (a): the allocation has no results")],
        {0: NODE0, 1: 8 * GI}, []),
    "size from the claim config of our driver (another driver's config ignored)": (
        [("prepare", "a", (CFG("gpu.example.com", {"mode": "x"}), CFG(DRV, {"size": "2Gi"})), [unsized(1)],
          edits("1"))], {0: NODE0, 1: 6 * GI}, ["a"]),
    "a config for other requests does not size this one": (
        [("prepare", "a", (CFG(DRV, {"size": "2Gi"}, ("other",)),), [unsized(1)], "claim default/claim-a (a): "
          "results[0] (request 'mem', device 'memory-numa1'): no size")], {0: NODE0, 1: 8 * GI}, []),
    "a parameter the policy does not take: refused": (
        [("prepare", "a", (CFG(DRV, {"size": "1Gi", "mode": "bind"}),), [unsized(0)],
          "claim default/claim-a (a): config parameters the kubelet-static policy does not take: mode")],
        {0: NODE0, 1: 8 * GI}, []),
    "a result of another driver: refused": (
        [("prepare", "a", (), [r.DeviceRequestAllocationResult("mem", "other.io", "p", "memory-numa0")],
          "claim default/claim-a (a): results[0] (request 'mem', device 'memory-numa0'): driver 'other.io'")],
        {0: NODE0, 1: 8 * GI}, []),
    "a device that is not ours: refused": (
        [("prepare", "a", (), [r.DeviceRequestAllocationResult("mem", DRV, "p", "cpu3")],
          "claim default/claim-a (a): results[0] (request 'mem', device 'cpu3'): no such device")],
        {0: NODE0, 1: 8 * GI}, []),
    "the last line of defence: memory another claim holds": (
        [("prepare", "a", (), [result(1, 5 * GI)], edits("1")),
         ("prepare", "b", (), [result(1, 4 * GI)], "claim default/claim-b (b) needs 4Gi of memory on NUMA node 1, "
          "which has 3Gi free; held by claim default/claim-a (a) (5Gi)")], {0: NODE0, 1: 3 * GI}, ["a"]),
    "a refused result takes nothing of the others": (
        [("prepare", "a", (), [result(0, GI), result(1, 9 * GI)], "claim default/claim-a (a) needs 9Gi")],
        {0: NODE0, 1: 8 * GI}, []),
    "unprepared: freed; unknown or twice: fine; the UID may come again": (
        [("prepare", "a", (), [result(1, 3 * GI)], edits("1")), ("unprepare", "a"), ("unprepare", "a"),
         ("unprepare", "never"), ("prepare", "a", (), [result(0, GI)], edits("0"))],
        {0: NODE0 - GI, 1: 8 * GI}, ["a"]),
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_claim_table(tmp_path, name: str) -> None:
    steps, expected_free, held = TABLE[name]
    policy, owner = make_policy(str(tmp_path))
    for step in steps:
        if step[0] == "unprepare":
            owner.unprepare(step[1])
            continue
        _, uid, configs, results, expected = step
        if isinstance(expected, str):
            with pytest.raises(r.PolicyError) as err:
                owner.prepare(claim(uid, *configs), results)
            assert str(err.value).startswith(expected), str(err.value)
        else:
            assert owner.prepare(claim(uid, *configs), results) == expected
    assert free(policy) == expected_free
    assert [c.uid for c in policy.backend.claim_records()] == held
    assert owner.lock.retakes == 0 and not owner.held
    # a restart keeps exactly what the table left
    again, owner2 = make_policy(str(tmp_path))
    assert free(again) == expected_free and [c.uid for c in again.backend.claim_records()] == held


def test_a_held_claim_prepared_again_after_a_restart(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    first: Optional[list[r.ContainerEdits]] = owner.prepare(claim("a"), [result(1, 3 * GI)])
    again, owner2 = make_policy(str(tmp_path))
    assert owner2.prepare(claim("a"), [result(1, 3 * GI)]) == first
    assert free(again) == {0: NODE0, 1: 5 * GI}
