"""NodeResourceTopology as NFD's topology-updater computes it from PodResources, validated
against the NRT CRD schema (fixtures/nrt); from a served node, a live socket and a scenario."""
from __future__ import annotations

import io
import json

import yaml

import memorymanager.cli.app as cli
from memorymanager.node.api import read_kubelet
from memorymanager.server import podfingerprint
from memorymanager.server.nrt import from_host, node_resource_topology, topology_policy
from memorymanager.server.protos.v1 import api_pb2 as v1
from tests.helpers.paths import FIXTURES
from tests.server.openapi import problems
from tests.server.serving import machine, pod, serving

SCHEMA = yaml.safe_load((FIXTURES / "nrt" / "noderesourcetopology-v1alpha2.schema.yaml").read_text())
BEST_EFFORT = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort",
               "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"},
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def resources(obj: dict) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {(z["name"], r["name"]): (int(r["capacity"]), int(r["allocatable"]), int(r["available"]))
            for z in obj["zones"] for r in z["resources"]}


def test_zones_attributes_and_a_multi_numa_block_drawn_down_lowest_node_first(tmp_path):
    with serving(tmp_path, BEST_EFFORT) as (server, c):
        assert c.admit(pod("big", memory="20Gi", cpu="2")).admitted
        obj = from_host(server.host, "worker-1")
        assert problems(obj, SCHEMA) == []
        assert obj["apiVersion"] == "topology.node.k8s.io/v1alpha2" and obj["kind"] == "NodeResourceTopology"
        assert obj["metadata"] == {"name": "worker-1"}
        assert obj["topologyPolicies"] == ["BestEffortContainerLevel"]
        assert obj["attributes"] == [  # no topologyManagerOption...: NFD publishes no policy options
            {"name": "topologyManagerPolicy", "value": "best-effort"},
            {"name": "topologyManagerScope", "value": "container"},
            {"name": "nodeTopologyPodsFingerprint", "value": podfingerprint.sign([("default", "big")])},
        ]
        assert [(z["name"], z["type"]) for z in obj["zones"]] == [("node-0", "Node"), ("node-1", "Node")]
        assert obj["zones"][0]["costs"] == [{"name": "node-0", "value": 10}, {"name": "node-1", "value": 20}]
        got = resources(obj)
        alloc0 = (16 << 30) - (2 << 30) - (100 << 20)
        alloc1 = (16 << 30) - (2 << 30)
        assert got[("node-0", "memory")] == (16 << 30, alloc0, 0)
        assert got[("node-1", "memory")] == (16 << 30, alloc1, alloc1 - ((20 << 30) - alloc0))
        assert got[("node-0", "hugepages-2Mi")] == (2 << 30, 2 << 30, 2 << 30)
        assert ("node-0", "cpu") not in got  # no CPU ids reported: no cpu resource where memory is allocatable


def test_a_guaranteed_pod_with_fractional_cpus_has_its_memory_drawn_down(tmp_path):
    with serving(tmp_path) as (server, c):
        assert c.admit(pod("frac", memory="1Gi", cpu="500m")).admitted  # Guaranteed, pinned memory
        listing = c.list()
        block = listing.pod_resources[0].containers[0].memory[0]  # kubelet reports the block
        got = resources(from_host(server.host, "n"))
        numa = f"node-{block.topology.nodes[0].ID}"
        _, alloc, avail = got[(numa, "memory")]
        assert alloc - avail == 1 << 30  # NFD v0.18+ counts every Guaranteed pod
        assert sum(a - v for (z, name), (_, a, v) in got.items() if (z, name) != (numa, "memory")) == 0


def test_a_burstable_pod_is_not_counted(tmp_path):
    burstable = json.dumps({"metadata": {"name": "b"}, "spec": {"containers": [
        {"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}}]}})
    with serving(tmp_path) as (server, c):
        assert c.admit(burstable).admitted
        obj = from_host(server.host, "n")
        assert all(alloc == avail for _, alloc, avail in resources(obj).values())
        assert obj["attributes"][-1] == {"name": "nodeTopologyPodsFingerprint",
                                         "value": podfingerprint.sign([("default", "b")])}  # but fingerprinted


def test_nrt_from_a_live_socket_equals_the_served_nodes(tmp_path):
    machine_file = tmp_path / "machine.json"
    from kubeinputs.machine import machine_info_to_obj

    machine_file.write_text(json.dumps(machine_info_to_obj(machine())))
    kubelet_file = tmp_path / "kubelet.yaml"
    kubelet_file.write_text(yaml.safe_dump({"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
                                            **BEST_EFFORT}))
    with serving(tmp_path, BEST_EFFORT) as (server, c):
        c.admit(pod("a", memory="3Gi", hugepages="256Mi"))
        out = io.StringIO()
        code = cli.main(["nrt", "--socket", server.socket_path, "--machine", str(machine_file),
                         "--kubelet", str(kubelet_file), "--node-name", "n", "--json"], out=out, err=io.StringIO())
        assert code == 0
        live = json.loads(out.getvalue())
        assert problems(live, SCHEMA) == []
        # in-process the pod specs are known; over the socket a pod with blocks counts too: same here
        assert live == from_host(server.host, "n")


def test_nrt_over_a_socket_refuses_a_machine_that_lacks_the_served_numa_nodes(tmp_path):
    one_node = tmp_path / "one.json"
    from kubeinputs.machine import machine_info_to_obj
    import memorymanager

    one_node.write_text(json.dumps(machine_info_to_obj(memorymanager.synthetic_machine(1, 4 << 30))))
    with serving(tmp_path, BEST_EFFORT) as (server, c):
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(["nrt", "--socket", server.socket_path, "--machine", str(one_node)], out=out, err=err)
        assert code != 0
        assert "reports NUMA node(s) [1]" in err.getvalue() and "--machine" in err.getvalue()
        assert "Traceback" not in err.getvalue()


def test_nrt_of_a_scenario_validates(tmp_path):
    out = io.StringIO()
    path = FIXTURES / "scenarios" / "memory" / "060-pod-scope-admit-cross-numa.yaml"
    assert cli.main(["nrt", "--scenario", str(path), "--node-name", "s"], out=out, err=io.StringIO()) == 0
    obj = yaml.safe_load(out.getvalue())
    assert problems(obj, SCHEMA) == []
    assert obj["topologyPolicies"] == ["BestEffortPodLevel"]


def test_node_without_allocatable_reports_its_cpus_as_reserved():
    from kubeinputs.machine import parse_machine_info

    m = parse_machine_info({"topology": [
        {"node_id": 0, "memory": 1 << 30, "cores": [{"core_id": 0, "thread_ids": [0, 1]}], "distances": [10]}]}, "m")
    obj = node_resource_topology("n", m, read_kubelet(None), v1.AllocatableResourcesResponse(),
                                 v1.ListPodResourcesResponse())
    assert obj["zones"][0]["resources"] == [{"name": "cpu", "capacity": "2", "allocatable": "0", "available": "0"}]
    assert problems(obj, SCHEMA) == []


def test_names():
    assert topology_policy("single-numa-node", "pod") == "SingleNUMANodePodLevel"
    assert topology_policy("restricted", "container") == "RestrictedContainerLevel"
    assert topology_policy("none", "container") == "None"
    assert topology_policy("best-effort", "node") == "None"  # an unknown scope, as NFD


def test_the_schema_check_refuses_what_the_crd_refuses():
    bad = {"zones": [{"name": "node-0", "type": "Node", "costs": [{"name": "node-0", "value": "10"}],
                      "resources": [{"name": "memory", "capacity": "1Gi", "allocatable": "1 Gi"}], "extra": 1}]}
    found = problems(bad, SCHEMA)
    assert any("missing required available" in p for p in found)
    assert any("does not match the pattern" in p for p in found)
    assert any("costs[0].value: expected an integer" in p for p in found)
    assert any("extra: not in the schema" in p for p in found)


def test_cpus_and_devices_from_providers_over_the_socket(tmp_path):
    from kubeinputs.machine import parse_machine_info
    from memorymanager.server.podresources import parse_provider_data

    def cores(first):
        return [{"core_id": 0, "thread_ids": [first, first + 1]}, {"core_id": 1, "thread_ids": [first + 2, first + 3]}]

    machine_doc = {"topology": [
        {"node_id": 0, "memory": 16 << 30, "hugepages": [{"page_size": 2048, "num_pages": 1024}], "cores": cores(0),
         "distances": [10, 20]},
        {"node_id": 1, "memory": 16 << 30, "hugepages": [{"page_size": 2048, "num_pages": 1024}], "cores": cores(4),
         "distances": [20, 10]}]}
    parse_machine_info(machine_doc, "m")
    machine_file = tmp_path / "machine.json"
    machine_file.write_text(json.dumps(machine_doc))
    providers = parse_provider_data(yaml.safe_load("""
cpus:
  allocatable: [1, 2, 3, 5, 6, 7]
  containers: {default/db/app: [2, 3]}
devices:
  allocatable: [{resourceName: example.com/gpu, deviceIds: [gpu0, gpu1], numaNodes: [1]}]
  containers: {default/db/app: [{resourceName: example.com/gpu, deviceIds: [gpu0], numaNodes: [1]}]}
"""))
    with serving(tmp_path, providers=providers) as (server, c):
        assert c.admit(pod("db", cpu="2")).admitted
        out = io.StringIO()
        assert cli.main(["nrt", "--socket", server.socket_path, "--machine", str(machine_file), "--node-name", "n",
                         "--json"], out=out, err=io.StringIO()) == 0
        obj = json.loads(out.getvalue())
    assert problems(obj, SCHEMA) == []
    got = resources(obj)
    assert got[("node-0", "cpu")] == (4, 3, 1)  # cpu 0 reserved; 2 and 3 taken by db
    assert got[("node-1", "cpu")] == (4, 3, 3)
    assert got[("node-1", "example.com/gpu")] == (2, 2, 1)
    assert got[("node-0", "memory")][2] == got[("node-0", "memory")][1] - (1 << 30)


def test_provider_data_errors_name_the_path():
    import pytest

    from kubeinputs.errors import InputError
    from memorymanager.server.podresources import parse_provider_data

    with pytest.raises(InputError) as err:
        parse_provider_data({"cpus": {"containers": {"db/app": [1]}}}, "p.yaml")
    assert "expected a key namespace/pod/container" in str(err.value) and "p.yaml" in str(err.value)
    with pytest.raises(InputError) as err:
        parse_provider_data({"gpus": {}}, "p.yaml")
    assert "unknown key" in str(err.value)


def test_the_updaters_flags_on_the_command_line():
    path = str(FIXTURES / "scenarios" / "memory" / "060-pod-scope-admit-cross-numa.yaml")

    def nrt(*flags):
        out = io.StringIO()
        assert cli.main(["nrt", "--scenario", path, "--node-name", "s", "--json", *flags], out=out,
                        err=io.StringIO()) == 0
        return json.loads(out.getvalue())

    default = nrt()
    assert [a["name"] for a in default["attributes"]] == ["topologyManagerPolicy", "topologyManagerScope",
                                                          "nodeTopologyPodsFingerprint"]
    assert any(alloc != avail for _, alloc, avail in resources(default).values())
    assert [a["name"] for a in nrt("--no-pods-fingerprint")["attributes"]] == ["topologyManagerPolicy",
                                                                               "topologyManagerScope"]
    elsewhere = nrt("--watch-namespace", "elsewhere")
    assert all(alloc == avail for _, alloc, avail in resources(elsewhere).values())
    assert elsewhere["attributes"] == default["attributes"]  # the fingerprint covers every pod
