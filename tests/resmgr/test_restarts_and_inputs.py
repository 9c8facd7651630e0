"""resmgr: a container restarted under a new ID keeps its pod's memory whatever order the IDs are
released in (issue 18 item 1); claims and containers do not share a key space; wrong argument
types are clear errors; a claim record file of many claims loads (issue 20)."""
from __future__ import annotations

import json
import os

import pytest

import memorymanager
from kubeinputs.quantity import Quantity
from memorymanager import resmgr as r
from memorymanager.resmgr.kubelet_placement import claim_pod_uid

from tests.resmgr.helpers import GI, MI, claim, container, free, make_policy, pod, result


def reserved(policy: r.Policy, numa: int) -> int:
    return policy.backend.machine_state()[numa].memory_map["memory"].reserved


def test_releasing_the_id_a_restart_replaced_releases_nothing(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    first = container("db", "3Gi")
    policy.allocate_resources(first)
    assert first.memset == "0" and reserved(policy, 0) == 3 * GI
    again = r.Container("db-app-restarted", pod("db", "3Gi"), "app")  # same pod UID and name, new ID
    policy.allocate_resources(again)
    assert again.memset == "0" and reserved(policy, 0) == 3 * GI
    policy.release_resources(first)  # the old ID, after the new one took over
    assert reserved(policy, 0) == 3 * GI  # was: 0, the new container's memory released
    assert policy.backend.export_resource_data(again) == {"MEMS": "0"}
    big = container("big", "7Gi")
    policy.allocate_resources(big)
    assert big.memset == "1"  # was: node 0 too, where `again` still holds 3Gi
    policy.release_resources(again)
    assert reserved(policy, 0) == 0 and [c.id for c in policy.cache] == ["big-app"]


def test_releasing_the_holder_first_forgets_the_replaced_id(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    first, again = container("db", "3Gi"), r.Container("db-app-2", pod("db", "3Gi"), "app")
    policy.allocate_resources(first)
    policy.allocate_resources(again)
    policy.release_resources(again)
    assert reserved(policy, 0) == 0 and len(policy.cache) == 0
    policy.release_resources(first)  # late, and nothing left to release
    assert reserved(policy, 0) == 0
    other = container("other", "2Gi")
    policy.allocate_resources(other)
    policy.release_resources(first)
    assert reserved(policy, 0) == 2 * GI


def test_the_holder_survives_a_restart_of_the_policy(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    first, again = container("db", "3Gi"), r.Container("db-app-2", pod("db", "3Gi"), "app")
    policy.allocate_resources(first)
    policy.allocate_resources(again)
    restarted, _ = make_policy(str(tmp_path))
    restarted.sync(list(restarted.cache), [])
    restarted.release_resources(first)
    assert reserved(restarted, 0) == 3 * GI
    restarted.release_resources(again)
    assert reserved(restarted, 0) == 0


def squatter(uid: str) -> r.Container:
    """A container whose pod UID is the synthetic pod UID of claim `uid`."""
    manifest = {"metadata": {"name": "squatter", "uid": claim_pod_uid(uid)},
                "spec": {"containers": [{"name": "result-0", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}
    return r.Container("squatter", manifest, "result-0")


def test_claims_and_containers_do_not_share_a_key_space(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    policy.allocate_claim(claim("c1"), [result(1, 3 * GI)])
    assert reserved(policy, 1) == 3 * GI
    intruder = squatter("c1")
    with pytest.raises(r.PolicyError, match="reserved for DRA claims"):
        policy.allocate_resources(intruder)
    policy.release_resources(intruder)
    assert reserved(policy, 1) == 3 * GI  # was: 0, the claim's memory released by a container
    policy.sync([intruder], [intruder])  # was: adopted as placed, with the claim's memory; now logged, skipped
    assert [c.id for c in policy.cache] == [] and reserved(policy, 1) == 3 * GI
    assert policy.backend.export_resource_data(intruder) == {}  # was: MEMS=1, the claim's node


def test_a_cache_file_with_a_container_in_the_claims_key_space_is_refused(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    policy.allocate_resources(container("db", "1Gi"))
    path = os.path.join(str(tmp_path), "cache")
    doc = json.load(open(path))
    doc["containers"][0]["pod"]["metadata"]["uid"] = claim_pod_uid("c1")
    json.dump(doc, open(path, "w"))
    with pytest.raises(r.PolicyError, match="is in the DRA claims' key space"):
        make_policy(str(tmp_path))


WRONG_CALLS = {
    "allocate_claim(None)": (lambda p: p.allocate_claim(None, []), "allocate_claim: claim: expected a ResourceClaim"),
    "allocate_claim results None": (lambda p: p.allocate_claim(claim("a"), None), "allocate_claim: results: expected a list"),
    "allocate_claim results int": (lambda p: p.allocate_claim(claim("a"), 5), "allocate_claim: results: expected a list"),
    "release_claim(None)": (lambda p: p.release_claim(None), "release_claim: uid: expected a string, got null"),
    "release_claim(5)": (lambda p: p.release_claim(5), "release_claim: uid: expected a string, got integer 5"),
    "allocate_resources(None)": (lambda p: p.allocate_resources(None), "allocate_resources: container: expected a Container"),
    "release_resources(dict)": (lambda p: p.release_resources({"id": "x"}), "release_resources: container: expected a Container, got map"),
    "update_resources(None)": (lambda p: p.update_resources(None), "update_resources: container"),
    "container_started(1)": (lambda p: p.container_started(1), "container_started: container"),
    "export_resource_data(None)": (lambda p: p.export_resource_data(None), "export_resource_data: container"),
    "sync(None, None)": (lambda p: p.sync(None, None), "sync: add: expected a list of Container"),
    "sync([1], [])": (lambda p: p.sync([1], []), "sync: add[0]: container"),
    "cache.insert(None)": (lambda p: p.cache.insert(None), "ContainerCache.insert: container"),
    "cache.lookup(None)": (lambda p: p.cache.lookup(None), "ContainerCache.lookup: container_id"),
    "cache.container_directory('../x')": (lambda p: p.cache.container_directory("../../x"),
                                          "ContainerCache.container_directory: container_id: expected a container ID"),
}


@pytest.mark.parametrize("call", list(WRONG_CALLS))
def test_wrong_argument_types_are_named(tmp_path, call) -> None:
    policy, _ = make_policy(str(tmp_path))
    fn, text = WRONG_CALLS[call]
    with pytest.raises(r.PolicyArgumentError, match=text.replace("(", r"\(").replace("[", r"\[")) as caught:
        fn(policy)
    assert isinstance(caught.value, r.PolicyError) and isinstance(caught.value, memorymanager.InputError)
    assert not (tmp_path / "x").exists()


WRONG_VALUES = {
    "ResourceClaim(configs=None)": (lambda: r.ResourceClaim("u", "n", "default", None), "ResourceClaim.configs"),
    "ResourceClaim(configs=[dict])": (lambda: r.ResourceClaim("u", "n", "default", ({"driver": "x"},)),
                                      "ResourceClaim.configs[0]: expected a ClaimConfig, got map"),
    "ResourceClaim(uid='')": (lambda: r.ResourceClaim(""), "ResourceClaim.uid: expected a non-empty string"),
    "ResourceClaim(namespace=None)": (lambda: r.ResourceClaim("u", "n", None), "ResourceClaim.namespace"),
    "ClaimConfig(parameters=None)": (lambda: r.ClaimConfig("d", None), "ClaimConfig.parameters: expected a map"),
    "ClaimConfig(requests=5)": (lambda: r.ClaimConfig("d", {}, 5), "ClaimConfig.requests: expected a list of strings"),
    "result(consumed=None)": (lambda: r.DeviceRequestAllocationResult("m", "d", "p", "memory-numa0", None),
                              "DeviceRequestAllocationResult.consumed_capacity"),
    "result(device=5)": (lambda: r.DeviceRequestAllocationResult("m", "d", "p", 5), "DeviceRequestAllocationResult.device"),
    "Container(claims=None)": (lambda: r.Container("x-app", pod("x"), "app", claims=None), "container.claims"),
    "Container(claims='abc')": (lambda: r.Container("x-app", pod("x"), "app", claims="abc"), "container.claims"),
    "Container(memset=5)": (lambda: r.Container("x-app", pod("x"), "app", memset=5), "container.memset"),
    "Container(started='yes')": (lambda: r.Container("x-app", pod("x"), "app", started="yes"), "container.started"),
    "Container(pod=None)": (lambda: r.Container("x-app", None, "app"), "container.pod"),
    "ContainerCache(5)": (lambda: r.ContainerCache(5), "ContainerCache.directory"),
    "ContainerCache('')": (lambda: r.ContainerCache(""), "ContainerCache.directory"),  # was: ./cache
    "Container('a\\n')": (lambda: r.Container("a\n", pod("x"), "app"), "container.id"),  # was: a folder "a\n"
    "new_policy(None)": (lambda: r.new_policy(None, r.ContainerCache()), "new_policy: backend"),
    "new_policy(cache=dict)": (lambda: r.new_policy(r.KubeletBackend(), {}), "new_policy: cache"),
}


@pytest.mark.parametrize("value", list(WRONG_VALUES))
def test_wrong_values_are_named(value) -> None:
    fn, text = WRONG_VALUES[value]
    with pytest.raises(r.PolicyArgumentError) as caught:
        fn()
    assert text in str(caught.value)


def test_a_device_name_with_300_digits_is_no_device(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    odd = r.DeviceRequestAllocationResult("mem", r.DEFAULT_DRIVER, "pool0", "memory-numa" + "9" * 300,
                                          {"size": Quantity.from_int(GI)})
    with pytest.raises(r.PolicyError, match=r"no such device \(devices are memory-numa<N>\)") as caught:
        policy.allocate_claim(claim("d"), [odd])
    assert len(str(caught.value)) < 600


def test_a_device_name_with_a_trailing_newline_is_no_device(tmp_path) -> None:
    policy, _ = make_policy(str(tmp_path))
    odd = r.DeviceRequestAllocationResult("mem", r.DEFAULT_DRIVER, "pool0", "memory-numa0\n",
                                          {"size": Quantity.from_int(GI)})
    with pytest.raises(r.PolicyError, match="no such device"):
        policy.allocate_claim(claim("d"), [odd])


def test_many_lost_claims_are_reserved_again_at_start(tmp_path) -> None:
    """A claim record file whose claims the checkpoint lost (a new state folder): every claim is
    reserved again at start, the checkpoint written once for all (was: once per claim)."""
    state = tmp_path / "kubelet"
    state.mkdir()
    claims = {f"c{i}": {"uid": f"c{i}", "name": f"n{i}", "namespace": "default",
                        "allocations": [{"request": "mem", "device": f"memory-numa{i % 2}", "numaNode": i % 2,
                                         "resource": "memory", "size": MI}],
                        "edits": [{"env": [f"CLAIMED_MEMS={i % 2}"]}]} for i in range(300)}
    (state / "claims.json").write_text(json.dumps({"version": 1, "claims": claims}))
    policy, _ = make_policy(str(tmp_path))
    assert reserved(policy, 0) == 150 * MI and reserved(policy, 1) == 150 * MI
    assert free(policy)[1] == 8 * GI - 150 * MI
    from state.checkpoint import read_checkpoint

    saved = read_checkpoint((state / "memory_manager_state").read_bytes())
    assert len(saved.entries) == 300
