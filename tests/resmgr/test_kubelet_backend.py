"""The kubelet-static backend: containers placed exactly as the node places them, release,
sync and restart, resize rules, exports, zones, metrics, devices and NUMA memory claims."""
from __future__ import annotations

import json
import os

import pytest
from prometheus_client import generate_latest

import memorymanager
from memorymanager import resmgr as r
from memorymanager.resmgr.kubelet_containers import RESIZE_INFEASIBLE, RESIZE_QOS
from memorymanager.resmgr.kubelet_placement import claim_pod_uid

from tests.resmgr.helpers import GI, MACHINE, MI, STATIC, FakeOwner, claim, container, free, make_policy, pod, result


def test_names() -> None:
    backend = r.KubeletBackend()
    assert backend.name() == "kubelet-static"
    assert "memory manager" in backend.description()


def test_allocation_is_the_nodes_admission(tmp_path) -> None:
    """The same pods through the backend and through memorymanager.Node give the same machine state."""
    policy, _ = make_policy(str(tmp_path))
    node = memorymanager.Node(MACHINE, STATIC)
    for name, memory in [("a", "3Gi"), ("b", "5Gi"), ("c", "2Gi")]:
        c = container(name, memory)
        policy.allocate_resources(c)
        answer = node.admit(pod(name, memory))
        assert answer.admitted
        assert c.memset == answer.placements["app"].cpuset_mems
    assert policy.backend.machine_state() == node.machine_state()


def test_refusal_is_kubelets(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    with pytest.raises(r.PolicyError) as err:
        policy.allocate_resources(container("huge", "9Gi"))  # single-numa-node: fits on no node
    node = memorymanager.Node(MACHINE, STATIC)
    answer = node.admit(pod("huge", "9Gi"))
    assert str(err.value) == f"default/huge/app: {answer.reason}: {answer.message}"
    assert policy.cache.lookup("huge-app") is None
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 8 * GI}


def test_burstable_gets_no_memory(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    c = container("burst", "2Gi", requests={"cpu": "1", "memory": "1Gi"})
    policy.allocate_resources(c)
    assert c.qos_class == "Burstable" and c.memset == ""
    assert policy.backend.export_resource_data(c) == {}


def test_release_is_idempotent_and_frees(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    c = container("a", "3Gi")
    policy.allocate_resources(c)
    assert free(policy)[0] == 5 * GI - 100 * MI
    policy.release_resources(c)
    policy.release_resources(c)
    policy.release_resources(container("never", "1Gi"))
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 8 * GI}
    assert len(policy.cache) == 0


def test_second_container_of_an_admitted_pod_allocates_nothing_more(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    manifest = pod("two", "1Gi", containers=("a", "b"))
    ca, cb = r.Container("two-a", manifest, "a"), r.Container("two-b", manifest, "b")
    policy.allocate_resources(ca)  # kubelet admits the pod whole: both containers placed
    after_first = free(policy)
    assert after_first[0] == 6 * GI - 100 * MI
    policy.allocate_resources(cb)
    assert free(policy) == after_first
    policy.release_resources(ca)
    assert free(policy)[0] == 7 * GI - 100 * MI  # only a's memory back
    policy.allocate_resources(ca)  # re-created: placed again (the pod is re-admitted, b kept)
    assert free(policy) == after_first
    policy.release_resources(ca)
    policy.release_resources(cb)
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 8 * GI}


def test_sync_releases_deleted_and_allocates_added(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    a, b = container("a", "3Gi"), container("b", "2Gi")
    policy.allocate_resources(a)
    policy.sync([b], [a])
    assert [c.id for c in policy.cache] == ["b-app"]
    assert free(policy)[0] == 6 * GI - 100 * MI


def test_sync_logs_and_skips_what_cannot_be_placed(tmp_path, caplog) -> None:
    """As topology-aware's Sync: a container that cannot be placed is logged and skipped, and Sync
    succeeds (a Sync error would fail the plugin's registration)."""
    policy, owner = make_policy(str(tmp_path))
    ok, x = container("ok", "1Gi"), container("x", "9Gi")
    with caplog.at_level("WARNING", logger="memorymanager.resmgr"):
        assert owner.synchronize([ok, x]) == [r.ContainerUpdate("ok-app", None, "0")]  # was: PolicyError
    assert [c.id for c in policy.cache] == ["ok-app"]
    assert "sync: failed to allocate resources for default/x/app: default/x/app: UnexpectedAdmissionError" in caplog.text


def test_restart_readopts_instead_of_replacing(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    for name, memory in [("a", "3Gi"), ("b", "6Gi"), ("c", "4Gi")]:
        policy.allocate_resources(container(name, memory))
    state = policy.backend.machine_state()
    memsets = {c.id: c.memset for c in policy.cache}
    # a new process: same folder, same configuration
    again, _ = make_policy(str(tmp_path))
    assert again.backend.machine_state() == state
    again.sync([again.cache.lookup(i) for i in memsets], [])
    assert again.backend.machine_state() == state
    assert {c.id: c.memset for c in again.cache} == memsets
    # and a new container after the restart is placed next to them, as kubelet would
    again.allocate_resources(container("d", "1Gi"))
    assert again.backend.machine_state() != state


def test_restart_drops_containers_gone_while_down(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    a, b = container("a", "3Gi"), container("b", "2Gi")
    policy.allocate_resources(a)
    policy.allocate_resources(b)
    again, _ = make_policy(str(tmp_path))
    again.sync([again.cache.lookup("b-app")], [again.cache.lookup("a-app")])
    assert free(again)[0] == 6 * GI - 100 * MI


@pytest.mark.parametrize("old, new, error", [
    ({"memory": "1Gi"}, {"memory": "1Gi"}, None),  # unchanged: accepted
    ({"memory": "1Gi"}, {"memory": "2Gi"}, f"Infeasible: {RESIZE_INFEASIBLE}"),  # Guaranteed + Static
    ({"memory": "2Gi", "requests": {"cpu": "1", "memory": "1Gi"}},
     {"memory": "3Gi", "requests": {"cpu": "1", "memory": "1Gi"}}, None),  # Burstable: holds no memory
    ({"memory": "2Gi", "requests": {"cpu": "1", "memory": "1Gi"}}, {"memory": "2Gi"}, RESIZE_QOS),  # QoS change
])
def test_update_resources(tmp_path, old: dict, new: dict, error) -> None:
    policy, _ = make_policy(str(tmp_path))
    c = container("r", old["memory"], requests=old.get("requests"))
    policy.allocate_resources(c)
    before = free(policy)
    resized = container("r", new["memory"], requests=new.get("requests"))
    if error is None:
        policy.update_resources(resized)
        assert policy.cache.lookup("r-app").resources == resized.resources
    else:
        with pytest.raises(r.PolicyError, match=error):
            policy.update_resources(resized)
        assert policy.cache.lookup("r-app").resources == c.resources
    assert free(policy) == before


def test_update_unknown_container(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    with pytest.raises(r.PolicyError, match="unknown container 'nope-app'"):
        policy.update_resources(container("nope"))


def test_container_started_is_persisted(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    c = container("s")
    policy.allocate_resources(c)
    policy.container_started(c)
    assert r.ContainerCache(str(tmp_path)).lookup("s-app").started
    with pytest.raises(r.PolicyError, match="unknown container"):
        policy.container_started(container("other"))


def test_cache_file_is_clear_about_corruption(tmp_path) -> None:
    (tmp_path / "cache").write_text("{not json")
    with pytest.raises(r.PolicyError, match="container cache .*cache is not valid JSON"):
        r.ContainerCache(str(tmp_path))


def test_bad_container_input_is_an_input_error() -> None:
    with pytest.raises(memorymanager.InputError, match="pod 'a' has no container 'web'"):
        r.Container("a-web", pod("a"), "web")
    with pytest.raises(memorymanager.InputError, match="container.id"):
        r.Container("../x", pod("a"), "app")


def test_topology_zones_and_container_subzones(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path), {**STATIC, "containerZones": True})
    policy.allocate_resources(container("a", "3Gi"))
    zones = policy.get_topology_zones()
    assert [(z.name, z.type, z.parent) for z in zones] == [
        ("node-0", "Node", ""), ("node-1", "Node", ""), ("default/a/app", r.CONTAINER_ALLOCATION_ZONE_TYPE, "node-0")]
    memory = zones[0].resources[0]
    assert (memory.name, str(memory.capacity), str(memory.allocatable), str(memory.available)) == (
        "memory", "8Gi", "8092Mi", "5020Mi")
    assert zones[0].attributes == (r.ZoneAttribute("memory set", "0"),)
    assert zones[2].attributes == (r.ZoneAttribute("memory set", "0"),)
    assert str(zones[2].resources[0].capacity) == "3Gi"
    plain, _ = make_policy(str(tmp_path / "plain"))
    assert len(plain.get_topology_zones()) == 2


def test_metrics(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    policy.allocate_resources(container("a", "3Gi"))
    policy.allocate_resources(container("b", "1Gi", requests={"cpu": "1", "memory": "512Mi"}))  # Burstable: no memset
    nodes = policy.collector.nodes
    assert (nodes[0].capacity, nodes[0].usage, nodes[0].container_count) == (8 * GI, 3 * GI, 1)
    assert (nodes[1].usage, nodes[1].container_count) == (0, 0)
    text = generate_latest(policy.registry).decode()
    assert 'mem_node_usage{node_id="0"} 3.221225472e+09' in text
    assert 'mem_node_container_count{node_id="0"} 1.0' in text
    assert 'mem_node_capacity{node_id="1"} 8.589934592e+09' in text


def test_extended_resources_owns_nothing(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    assert policy.get_extended_resources() == {}
    assert policy.reconcile_extended_resources({"x/y": memorymanager.resmgr.types.Quantity.from_int(1)}) == {
        "x/y": memorymanager.resmgr.types.Quantity.from_int(1)}


# ----- devices -----

@pytest.mark.parametrize("lists", [False, True])
def test_devices_published_at_start(tmp_path, lists: bool) -> None:
    owner = FakeOwner(lists=lists)
    make_policy(str(tmp_path), owner=owner)
    assert owner.publishes == 1
    assert [d.name for d in owner.devices] == ["memory-numa0", "memory-numa1"]
    d0 = owner.devices[0]
    assert d0.attributes["resource.kubernetes.io/numaNode"] == 0
    assert d0.attributes["memoryType"] == "memory"
    assert str(d0.capacity["size"]) == "8092Mi"
    assert ("distances" in d0.attributes) == lists
    if lists:
        assert d0.attributes["distances"] == (10, 20)


def test_none_policy_has_no_claims(tmp_path) -> None:
    owner = FakeOwner()
    policy, _ = make_policy(str(tmp_path), {"memoryManagerPolicy": "None"}, owner=owner)
    assert policy.active_policy() == "kubelet-none"
    assert owner.publishes == 0
    with pytest.raises(r.NoDRAClaimsError) as err:
        policy.allocate_claim(claim("x"), [result(0, GI)])
    assert err.value is r.ErrNoDRAClaims
    with pytest.raises(r.NoDRAClaimsError):
        policy.release_claim("x")
    c = container("a")
    policy.allocate_resources(c)
    assert c.memset == ""


# ----- claims -----

def test_claim_reserves_on_its_node_and_is_idempotent(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    edits = policy.allocate_claim(claim("c1"), [result(1, 3 * GI)])
    assert edits == [r.ContainerEdits(("CLAIMED_MEMS=1",))]
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 5 * GI}
    assert policy.allocate_claim(claim("c1"), [result(1, 3 * GI)]) == edits  # a second pod
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 5 * GI}
    again, _ = make_policy(str(tmp_path))  # a restart
    assert again.allocate_claim(claim("c1"), [result(1, 3 * GI)]) == edits
    assert free(again) == {0: 8 * GI - 100 * MI, 1: 5 * GI}


def test_claim_edits_follow_results(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    edits = policy.allocate_claim(claim("c"), [result(0, GI, "a"), result(1, GI, "b")])
    assert edits == [r.ContainerEdits(("CLAIMED_MEMS=0-1",))] * 2


def test_claim_size_from_config(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    res = r.DeviceRequestAllocationResult("mem", r.DEFAULT_DRIVER, "pool0", "memory-numa1")
    policy.allocate_claim(claim("c", r.ClaimConfig(r.DEFAULT_DRIVER, {"size": "2Gi"}, ("mem",))), [res])
    assert free(policy)[1] == 6 * GI
    other_driver = r.ClaimConfig("gpu.example.com", {"whatever": 1})  # not ours: ignored
    policy.allocate_claim(claim("d", other_driver, r.ClaimConfig(r.DEFAULT_DRIVER, {"size": "1Gi"})), [res])
    assert free(policy)[1] == 5 * GI


@pytest.mark.parametrize("configs, results, message", [
    ((r.ClaimConfig(r.DEFAULT_DRIVER, {"size": "1Gi", "mode": "bind"}),), None,
     "config parameters the kubelet-static policy does not take: mode"),
    ((), [r.DeviceRequestAllocationResult("mem", r.DEFAULT_DRIVER, "pool0", "memory-numa0")], "no size"),
    ((), [r.DeviceRequestAllocationResult("mem", "other.io", "pool0", "memory-numa0")], "driver 'other.io' is not"),
    ((), [r.DeviceRequestAllocationResult("mem", r.DEFAULT_DRIVER, "pool0", "cpu7")], "no such device"),
    ((r.ClaimConfig(r.DEFAULT_DRIVER, {"size": "1.5"}),), None, "size '1.5' is not a whole number of bytes"),
    ((r.ClaimConfig(r.DEFAULT_DRIVER, {"size": "0"}),), None, "size must be positive"),
    ((), [result(7, GI)], "NUMA node 7 does not exist"),
])
def test_claim_refusals(tmp_path, configs, results, message: str) -> None:
    policy, _ = make_policy(str(tmp_path))
    with pytest.raises(r.PolicyError, match=message):
        policy.allocate_claim(claim("bad", *configs), results or [result(0, GI)])
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 8 * GI}
    assert policy.backend.claim_records() == []


def test_last_line_of_defence_names_both(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    owner.prepare(claim("old"), [result(1, 5 * GI)])  # a force-deleted pod's claim, still held
    owner.create_container(container("web", "4Gi"))
    with pytest.raises(r.PolicyError) as err:
        owner.prepare(claim("new"), [result(1, 4 * GI)])
    assert str(err.value) == (
        "claim default/claim-new (new) needs 4Gi of memory on NUMA node 1, which has 3Gi free; "
        "held by claim default/claim-old (old) (5Gi)")
    with pytest.raises(r.PolicyError) as err:
        owner.prepare(claim("new"), [result(0, 5 * GI)])
    assert "held by container default/web/app (4Gi)" in str(err.value)
    assert [c.uid for c in policy.backend.claim_records()] == ["old"]


def test_claim_refused_on_a_multi_node_group(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path), {**STATIC, "topologyManagerPolicy": "best-effort"})
    owner.create_container(container("wide", "10Gi"))  # spans nodes 0 and 1
    with pytest.raises(r.PolicyError) as err:
        owner.prepare(claim("c"), [result(1, 1 * GI)])
    assert "needs memory on NUMA node 1 alone, but the node is in the NUMA group 0-1" in str(err.value)
    assert "container default/wide/app" in str(err.value)


def test_containers_cannot_take_claimed_memory(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    policy.allocate_claim(claim("c"), [result(0, 7 * GI)])
    c = container("a", "2Gi")
    policy.allocate_resources(c)
    assert c.memset == "1"


def test_release_claim(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    policy.allocate_claim(claim("c"), [result(0, 2 * GI)])
    policy.release_claim("c")
    policy.release_claim("c")
    policy.release_claim("never-seen")
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 8 * GI}
    assert policy.backend.claim_records() == []


def test_claim_records_are_durable_and_restored_first(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    policy.allocate_claim(claim("c"), [result(0, 2 * GI)])
    web = container("web", "3Gi", claims=("c",))
    policy.allocate_resources(web)
    records = json.loads((tmp_path / "kubelet" / "claims.json").read_text())
    assert records["version"] == 1
    assert records["claims"]["c"]["allocations"] == [
        {"request": "mem", "device": "memory-numa0", "numaNode": 0, "resource": "memory", "size": 2 * GI}]
    assert [n for n in os.listdir(tmp_path / "kubelet") if n.startswith(".")] == []
    state = policy.backend.machine_state()
    # the checkpoint is lost: the claim is reserved again from its record before any container is placed
    os.remove(tmp_path / "kubelet" / "memory_manager_state")
    again, _ = make_policy(str(tmp_path))
    assert free(again) == {0: 6 * GI - 100 * MI, 1: 8 * GI}
    again.sync([again.cache.lookup("web-app")], [])
    assert again.backend.machine_state() == state
    assert again.backend.export_resource_data(again.cache.lookup("web-app")) == {"MEMS": "0", "CLAIMED_MEMS": "0"}


def test_orphan_claim_reservation_is_dropped(tmp_path) -> None:
    """A crash after the reservation but before the record: the reservation is stale on restart."""
    policy, _ = make_policy(str(tmp_path))
    policy.allocate_claim(claim("c"), [result(0, 2 * GI)])
    assert claim_pod_uid("c") in checkpoint_entries(tmp_path)  # the reservation is in kubelet's state
    os.remove(tmp_path / "kubelet" / "claims.json")
    again, _ = make_policy(str(tmp_path))
    again.allocate_resources(container("a", "1Gi"))  # the memory manager drops stale state here
    assert set(checkpoint_entries(tmp_path)) == {"uid-a"}  # the orphan reservation is gone, pod a's is there
    assert free(again)[0] == 7 * GI - 100 * MI


def checkpoint_entries(tmp_path) -> dict:
    """The pod UIDs of the memory manager's checkpoint (its `entries`), as kubelet would read them."""
    from state.checkpoint import read_checkpoint

    return read_checkpoint((tmp_path / "kubelet" / "memory_manager_state").read_bytes()).entries or {}


def test_reconfigure_restarts_kubelet(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path))
    owner.prepare(claim("c"), [result(1, 2 * GI)])
    owner.create_container(container("a", "3Gi"))
    state = policy.backend.machine_state()
    owner.reconfigure({**STATIC, "topologyManagerPolicy": "restricted"})
    assert policy.backend.machine_state() == state
    with pytest.raises(r.PolicyError, match="kubelet refused to start"):
        owner.reconfigure({"memoryManagerPolicy": "None"})  # the checkpoint is the Static policy's
    assert policy.active_policy() == "kubelet-static"
    assert policy.backend.machine_state() == state
    owner.create_container(container("b", "1Gi"))
    assert owner.push_calls == 0  # nothing moved: nothing to push


def test_restart_keeps_cached_containers_even_before_sync(tmp_path) -> None:
    """Started from the cache, every cached container is active at once: an allocation that
    comes before Synchronize does not make the memory manager drop them as stale."""
    policy, _ = make_policy(str(tmp_path))
    policy.allocate_resources(container("a", "3Gi"))
    again, _ = make_policy(str(tmp_path))
    again.allocate_resources(container("b", "1Gi"))
    assert free(again)[0] == 4 * GI - 100 * MI
    assert again.backend.export_resource_data(again.cache.lookup("a-app")) == {"MEMS": "0"}


def test_claim_pod_uids_are_reserved(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    manifest = pod("sneaky")
    manifest["metadata"]["uid"] = "dra-claim-c"
    with pytest.raises(r.PolicyError, match="pod UID 'dra-claim-c' is reserved for DRA claims"):
        policy.allocate_resources(r.Container("sneaky-app", manifest, "app"))


def test_published_devices_are_the_owners_copy(tmp_path) -> None:
    owner = FakeOwner()
    policy, _ = make_policy(str(tmp_path), owner=owner)
    first = list(owner.devices)
    policy.allocate_claim(claim("c"), [result(0, GI)])  # devices do not change with claims
    policy.reconfigure(dict(STATIC))  # a restart publishes again, the same devices
    assert owner.publishes == 2 and owner.devices == first


@pytest.mark.parametrize("tm_policy", ["none", "best-effort", "restricted", "single-numa-node"])
@pytest.mark.parametrize("scope", ["container", "pod"])
def test_claim_goes_to_its_node_under_every_topology_policy(tmp_path, tm_policy: str, scope: str) -> None:
    config = {**STATIC, "topologyManagerPolicy": tm_policy, "topologyManagerScope": scope}
    policy, _ = make_policy(str(tmp_path), config)
    policy.allocate_claim(claim("c"), [result(1, 3 * GI), result(1, 1 * GI, "second")])
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 4 * GI}
    with pytest.raises(r.PolicyError, match="needs 5Gi of memory on NUMA node 1, which has 4Gi free"):
        policy.allocate_claim(claim("d"), [result(1, 5 * GI)])
    policy.release_claim("c")
    assert free(policy) == {0: 8 * GI - 100 * MI, 1: 8 * GI}


def test_reconfigure_needs_a_state_dir() -> None:
    policy = r.new_policy(r.KubeletBackend(), r.ContainerCache(None), r.Options(FakeOwner()), MACHINE)
    policy.start(dict(STATIC))
    policy.allocate_resources(container("a", "1Gi"))
    with pytest.raises(r.PolicyError, match="reconfiguration needs a stateDir"):
        policy.reconfigure(dict(STATIC))
    assert free(policy)[0] == 7 * GI - 100 * MI


def test_update_resources_without_the_resize_gate(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path), {**STATIC, "featureGates": {"InPlacePodVerticalScaling": False}})
    c = container("r", "2Gi", requests={"cpu": "1", "memory": "1Gi"})
    policy.allocate_resources(c)
    with pytest.raises(r.PolicyError, match="feature gate InPlacePodVerticalScaling is off"):
        policy.update_resources(container("r", "3Gi", requests={"cpu": "1", "memory": "1Gi"}))


def test_pods_of_one_name_in_two_namespaces_are_two_pods(tmp_path) -> None:
    """Without metadata.uid the UID is NAMESPACE/NAME outside namespace default (the one identity
    rule): the second pod is placed on its own, not taken for the first."""
    policy, _ = make_policy(str(tmp_path))

    def in_namespace(namespace: str) -> r.Container:
        manifest = {"metadata": {"name": "db", "namespace": namespace},
                    "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "5Gi"}}}]}}
        return r.Container(f"{namespace}-db-app", manifest, "app")

    prod, staging = in_namespace("prod"), in_namespace("staging")
    policy.allocate_resources(prod)
    policy.allocate_resources(staging)
    assert (prod.pod_uid, staging.pod_uid) == ("prod/db", "staging/db")
    assert (prod.memset, staging.memset) == ("0", "1")  # 5Gi each: node 0 cannot hold both
    assert free(policy) == {0: 3 * GI - 100 * MI, 1: 3 * GI}
    policy.release_resources(staging)
    assert free(policy) == {0: 3 * GI - 100 * MI, 1: 8 * GI}
