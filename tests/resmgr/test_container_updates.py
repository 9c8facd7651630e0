"""The placement applied: the cpusets kubelet would write, recorded as pending container changes and
carried to the runtime as nri-plugins' resource manager carries them (the NRI response of the request,
or `Owner.update_containers()` for reconfiguration and claims); and Synchronize as nri-plugins calls it."""
from __future__ import annotations

import json

import pytest

from memorymanager import resmgr as r

from tests.resmgr.helpers import GI, STATIC, FakeOwner, claim, container, make_policy, pod, result


def U(cid: str, mems: str) -> r.ContainerUpdate:
    return r.ContainerUpdate(cid, None, mems)


# ----- allocate, update, release -----

def test_create_container_gets_its_cpuset_mems_as_adjustment(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    assert owner.create_container(container("a", "3Gi")) == (U("a-app", "0"), [])
    assert owner.create_container(container("b", "6Gi")) == (U("b-app", "1"), [])  # node 0 cannot fit it
    assert policy.cache.pending() == []  # taken into the responses


def test_not_guaranteed_gets_no_cpuset_mems(tmp_path) -> None:
    """kubelet sets cpuset.mems only when the memory manager assigns memory (a Guaranteed pod)."""
    _, owner = make_policy(str(tmp_path))
    assert owner.create_container(container("burst", "2Gi", requests={"cpu": "1", "memory": "1Gi"})) == (None, [])


def test_each_container_of_a_pod_gets_its_own_adjustment(tmp_path) -> None:
    _, owner = make_policy(str(tmp_path))
    manifest = pod("two", "1Gi", containers=("a", "b"))
    assert owner.create_container(r.Container("two-a", manifest, "a")) == (U("two-a", "0"), [])
    assert owner.create_container(r.Container("two-b", manifest, "b")) == (U("two-b", "0"), [])


def test_update_resets_the_cpuset(tmp_path) -> None:
    """UpdateContainer with identical resources re-sets the container's cpuset (nri.go's short-circuit);
    an accepted resize of a Burstable container leaves nothing to set (kubelet pins no memory for it)."""
    _, owner = make_policy(str(tmp_path), {**STATIC, "featureGates": {"InPlacePodVerticalScaling": True}})
    db = container("db", "2Gi")
    owner.create_container(db)
    assert owner.update_container(container("db", "2Gi")) == [U("db-app", "0")]
    web = container("web", "2Gi", requests={"cpu": "1", "memory": "1Gi"})
    owner.create_container(web)
    assert owner.update_container(container("web", "3Gi", requests={"cpu": "1", "memory": "2Gi"})) == []


def test_release_moves_no_other_container_and_drops_its_own_change(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    a, b = container("a", "3Gi"), container("b", "3Gi")
    owner.create_container(a)
    with owner:
        policy.allocate_resources(b)  # a change left pending, never collected
    assert policy.cache.pending() == [U("b-app", "0")]
    assert owner.stop_container(b) == []  # kubelet never moves another container's memory
    assert policy.cache.pending() == []  # the released container's change went with it


def test_pending_changes_merge_and_are_taken_once(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    owner.create_container(container("a", "1Gi"))
    policy.cache.set_cpuset("a-app", mems="0")
    policy.cache.set_cpuset("a-app", cpus="2-3")
    assert policy.cache.pending() == [r.ContainerUpdate("a-app", "2-3", "0")]
    assert policy.cache.take_pending_updates() == [r.ContainerUpdate("a-app", "2-3", "0")]
    assert policy.cache.take_pending_updates() == [] and policy.cache.take_pending("a-app") is None
    with pytest.raises(r.PolicyError, match="'nope' is not cached"):
        policy.cache.set_cpuset("nope", mems="0")


# ----- changes the policy pushes itself: reconfiguration and claims -----

def stale_cache(tmp_path) -> None:
    """A cache file whose remembered cpuset for a-app disagrees with kubelet's checkpoint."""
    policy, owner = make_policy(str(tmp_path))
    owner.create_container(container("a", "1Gi"))
    path = tmp_path / "cache"
    doc = json.loads(path.read_text())
    doc["containers"][0]["memset"] = "1"
    path.write_text(json.dumps(doc))


def test_reconfigure_pushes_pending_changes_with_the_lock_held(tmp_path) -> None:
    stale_cache(tmp_path)
    policy, owner = make_policy(str(tmp_path))  # start: corrected, pending for Synchronize, not pushed
    assert policy.cache.lookup("a-app").memset == "0" and owner.push_calls == 0
    owner.reconfigure({**STATIC, "topologyManagerPolicy": "restricted"})
    assert owner.push_calls == 1 and owner.pushed == [U("a-app", "0")]  # update_containers asserts the lock
    assert owner.lock.retakes == 0


@pytest.mark.parametrize("request_", ["prepare", "unprepare"])
def test_claims_push_pending_changes_with_the_lock_held(tmp_path, request_: str) -> None:
    stale_cache(tmp_path)
    policy, owner = make_policy(str(tmp_path))
    if request_ == "prepare":
        owner.prepare(claim("c"), [result(1, GI)])
    else:
        owner.unprepare("c")
    assert owner.push_calls == 1 and owner.pushed == [U("a-app", "0")]
    owner.prepare(claim("d"), [result(1, GI)])
    assert owner.push_calls == 1  # nothing pending: no empty UpdateContainers round trip


def test_synchronize_carries_the_correction(tmp_path) -> None:
    stale_cache(tmp_path)
    policy, owner = make_policy(str(tmp_path))
    assert owner.synchronize(list(policy.cache)) == [U("a-app", "0")]
    assert owner.push_calls == 0


# ----- Synchronize -----

def test_synchronize_keeps_running_containers_where_they_are(tmp_path) -> None:
    """Every created or running container comes in both lists: each keeps its placement, where
    releasing them all and placing them again (in the order given) would move y to node 0."""
    policy, owner = make_policy(str(tmp_path))
    x, y, z = container("x", "5Gi"), container("y", "5Gi"), container("z", "2Gi")
    owner.create_container(x)  # node 0
    owner.create_container(y)  # node 1
    owner.stop_container(x)
    owner.create_container(z)  # node 0
    state = policy.backend.machine_state()
    assert owner.synchronize([y, z]) == [U("y-app", "1"), U("z-app", "0")]
    assert policy.backend.machine_state() == state
    assert {c.id: c.memset for c in policy.cache} == {"y-app": "1", "z-app": "0"}


def test_synchronize_after_a_restart_readopts(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    for name, memory in [("x", "5Gi"), ("y", "5Gi")]:
        owner.create_container(container(name, memory))
    owner.stop_container(policy.cache.lookup("x-app"))
    owner.create_container(container("z", "2Gi"))
    state = policy.backend.machine_state()
    again, owner2 = make_policy(str(tmp_path))
    running = [again.cache.lookup("y-app"), again.cache.lookup("z-app")]
    assert owner2.synchronize(running) == [U("y-app", "1"), U("z-app", "0")]
    assert again.backend.machine_state() == state


def test_synchronize_releases_stale_and_places_new(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    a, gone = container("a", "2Gi"), container("gone", "3Gi")
    owner.create_container(a)
    owner.create_container(gone)
    new = container("new", "1Gi")
    assert owner.synchronize([a, new], stale=[gone]) == [U("a-app", "0"), U("new-app", "0")]
    assert [c.id for c in policy.cache] == ["a-app", "new-app"]
    assert policy.backend.machine_state()[0].memory_map["memory"].reserved == 3 * GI


def test_synchronize_keeps_a_burstable_container(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    web = container("web", "2Gi", requests={"cpu": "1", "memory": "1Gi"})
    owner.create_container(web)
    assert owner.synchronize([web]) == []  # nothing to pin, nothing released
    assert [c.id for c in policy.cache] == ["web-app"]
    assert policy.backend.kubelet.is_active("uid-web")


def test_synchronize_never_fails_on_containers(tmp_path, caplog) -> None:
    policy, owner = make_policy(str(tmp_path))
    huge = container("huge", "9Gi")
    with caplog.at_level("WARNING", logger="memorymanager.resmgr"):
        assert owner.synchronize([huge]) == []
    assert "sync: failed to allocate resources for default/huge/app" in caplog.text
    assert len(policy.cache) == 0
    with pytest.raises(r.PolicyArgumentError, match="sync: add"):
        policy.sync("not a list", [])  # type: ignore[arg-type]


def test_unlocked_owner_call_is_caught() -> None:
    """The fake owner checks the Owner contract: update_containers only with the lock held."""
    owner = FakeOwner()
    with pytest.raises(AssertionError, match="needs the lock"):
        owner.update_containers()
