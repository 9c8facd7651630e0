"""PodResources v1 and v1alpha1 over a real unix socket: kubelet's List/Get/GetAllocatableResources
semantics, checked field by field against the node's own state, and the rate limit."""
from __future__ import annotations


import grpc
import pytest

from memorymanager.server.podresources import Device, ProviderData, TokenBucket
from memorymanager.server.protos.control import control_pb2 as ctl
from tests.server.serving import memory_of, pod, serving


def test_list_reports_sidecars_then_apps_with_one_memory_entry_per_block(tmp_path):
    with serving(tmp_path) as (server, c):
        answer = c.admit(pod("db", memory="2Gi", hugepages="512Mi", sidecar="proxy", init="setup"))
        assert answer.admitted
        listing = c.list()
        assert [p.name for p in listing.pod_resources] == ["db"]
        db = listing.pod_resources[0]
        assert db.namespace == "default"
        # the regular init container is not listed; the sidecar comes first
        assert [ct.name for ct in db.containers] == ["proxy", "app"]
        node = server.host.node
        uid = node.active_pods()[0].uid
        for container in db.containers:
            blocks = node.memory_blocks(uid, container.name)
            assert memory_of(container) == [(b.type, b.size, sorted(b.numa_affinity)) for b in blocks]
            assert list(container.cpu_ids) == [] and list(container.devices) == []
            assert all(m.HasField("topology") for m in container.memory)
        assert dict((t, s) for t, s, _ in memory_of(db.containers[1])) == {"memory": 2 << 30, "hugepages-2Mi": 512 << 20}
        assert list(db.memory) == []  # no pod-level blocks without PodLevelResourceManagers


def test_cross_numa_block_reports_whole_size_on_both_nodes(tmp_path):
    kubelet = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort",
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
    with serving(tmp_path, kubelet) as (_, c):
        assert c.admit(pod("big", memory="20Gi")).admitted
        (app,) = c.list().pod_resources[0].containers
        assert memory_of(app) == [("memory", 20 << 30, [0, 1])]


def test_allocatable_is_the_memory_managers_and_cached_at_start(tmp_path):
    with serving(tmp_path) as (server, c):
        before = c.allocatable()
        expected = server.host.node.allocatable()
        got: dict[int, dict[str, int]] = {}
        for m in before.memory:
            (numa,) = [n.ID for n in m.topology.nodes]
            got.setdefault(numa, {})[m.memory_type] = m.size
        assert got == expected
        assert got[0]["memory"] == (16 << 30) - (2 << 30) - (100 << 20)
        c.admit(pod("a", memory="4Gi"))
        assert c.allocatable() == before  # admissions do not change allocatable


def test_get_finds_active_pods_only_with_kubelets_error_text(tmp_path):
    with serving(tmp_path) as (_, c):
        c.admit(pod("web", namespace="shop"))
        got = c.get("web", "shop").pod_resources
        assert (got.name, got.namespace, [x.name for x in got.containers]) == ("web", "shop", ["app"])
        with pytest.raises(grpc.RpcError) as err:
            c.get("web", "default")
        assert err.value.code() == grpc.StatusCode.UNKNOWN
        assert err.value.details() == "pod web in namespace default not found"
        c.control.Remove(ctl.RemoveRequest(pod="web"))
        with pytest.raises(grpc.RpcError) as err:
            c.get("web", "shop")
        assert err.value.details() == "pod web in namespace shop not found"
        assert list(c.list().pod_resources) == []


def test_get_behind_its_feature_gate(tmp_path):
    kubelet = {"memoryManagerPolicy": "Static", "featureGates": {"KubeletPodResourcesGet": False},
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
    with serving(tmp_path, kubelet) as (_, c):
        c.admit(pod("web"))
        with pytest.raises(grpc.RpcError) as err:
            c.get("web")
        assert (err.value.code(), err.value.details()) == (grpc.StatusCode.UNKNOWN, "PodResources API Get method disabled")
        assert [p.name for p in c.list().pod_resources] == ["web"]


def test_none_policy_reports_no_memory(tmp_path):
    with serving(tmp_path, {}) as (_, c):
        assert c.admit(pod("web")).admitted
        (app,) = c.list().pod_resources[0].containers
        assert list(app.memory) == []
        assert list(c.allocatable().memory) == []


def test_restart_keeps_the_pods_and_blocks(tmp_path):
    with serving(tmp_path) as (server, c):
        c.admit(pod("a", memory="3Gi"))
        c.admit(pod("b", memory="5Gi"))
        before = c.list()
        c.control.Restart(ctl.RestartRequest())
        assert c.list() == before
        c.control.Remove(ctl.RemoveRequest(pod="a"))
        assert [p.name for p in c.list().pod_resources] == ["b"]


def test_v1alpha1_lists_app_containers_with_devices(tmp_path):
    providers = ProviderData(
        allocatable_cpus=[0, 1, 2, 3],
        container_cpus={"default/db/app": [2, 3]},
        allocatable_devices=[Device("example.com/gpu", ("gpu0", "gpu1"), (0,))],
        container_devices={"default/db/app": [Device("example.com/gpu", ("gpu0",), (0,))]},
    )
    with serving(tmp_path, providers=providers) as (_, c):
        c.admit(pod("db", sidecar="proxy"))
        alpha = c.list_alpha().pod_resources[0]
        assert [x.name for x in alpha.containers] == ["app"]  # v1alpha1 walks spec.containers only
        assert [(d.resource_name, list(d.device_ids)) for d in alpha.containers[0].devices] == [("example.com/gpu", ["gpu0"])]
        app = c.list().pod_resources[0].containers[1]
        assert list(app.cpu_ids) == [2, 3]
        assert [n.ID for n in app.devices[0].topology.nodes] == [0]
        alloc = c.allocatable()
        assert list(alloc.cpu_ids) == [0, 1, 2, 3] and alloc.devices[0].device_ids == ["gpu0", "gpu1"]


def test_rate_limit_rejects_a_burst_and_recovers(tmp_path):
    """Over the wire, with the bucket's clock in the test's hands: the outcome is the same however fast
    the calls go (the refill arithmetic itself: test_token_bucket_refills_at_its_rate)."""
    now = [0.0]
    bucket = TokenBucket(clock=lambda: now[0])  # kubelet's defaults: 100 calls/s, burst 10
    with serving(tmp_path, rate_limit=bucket) as (_, c):
        codes = []
        for _ in range(30):
            try:
                c.list()
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as err:
                codes.append(err.code())
                assert err.details() == "rejected by rate limit"
        assert codes == [grpc.StatusCode.OK] * 10 + [grpc.StatusCode.RESOURCE_EXHAUSTED] * 20  # the burst, then none
        with pytest.raises(grpc.RpcError) as err:
            c.allocatable()  # one bucket for every method
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        now[0] += 0.02  # two tokens
        c.list()
        c.allocatable()
        with pytest.raises(grpc.RpcError) as err:
            c.list_alpha()
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_token_bucket_refills_at_its_rate():
    now = [0.0]
    bucket = TokenBucket(100, 10, clock=lambda: now[0])
    assert sum(bucket.allow() for _ in range(50)) == 10
    now[0] += 0.05  # 5 tokens
    assert sum(bucket.allow() for _ in range(50)) == 5
    now[0] += 10  # never more than the burst
    assert sum(bucket.allow() for _ in range(50)) == 10


def test_malformed_request_bytes_get_a_status_and_the_server_lives(tmp_path):
    with serving(tmp_path) as (_, c):
        raw = c.channel.unary_unary("/v1.PodResourcesLister/Get", request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as err:
            raw(b"\xff\xff\xff", timeout=120)
        assert (err.value.code(), err.value.details()) == (grpc.StatusCode.INTERNAL, "Exception deserializing request!")
        unknown = c.channel.unary_unary("/v1.PodResourcesLister/Nope", request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as err:
            unknown(b"", timeout=120)
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert list(c.list().pod_resources) == []


def test_get_answers_a_pod_refused_at_admission_as_kubelets_pod_manager_holds_it(tmp_path):
    """kubelet's Get reads the pod manager (GetPodByName), which keeps a rejected pod (Failed) until it
    is deleted: Get answers it, with no memory; List (active pods) leaves it out."""
    with serving(tmp_path) as (_, c):
        assert not c.admit(pod("huge", memory="20Gi", namespace="shop")).admitted  # fits only across both nodes
        got = c.get("huge", "shop").pod_resources
        assert (got.name, got.namespace, [x.name for x in got.containers]) == ("huge", "shop", ["app"])
        assert [memory_of(x) for x in got.containers] == [[]]
        assert list(c.list().pod_resources) == []
        with pytest.raises(grpc.RpcError) as err:
            c.get("huge", "default")
        assert err.value.details() == "pod huge in namespace default not found"
        c.control.Remove(ctl.RemoveRequest(pod="huge", namespace="shop"))  # deleted: the pod manager forgets it
        with pytest.raises(grpc.RpcError) as err:
            c.get("huge", "shop")
        assert (err.value.code(), err.value.details()) == (grpc.StatusCode.UNKNOWN, "pod huge in namespace shop not found")
        assert c.admit(pod("huge", memory="1Gi", namespace="shop")).admitted  # admitted after all: the active pod
        assert memory_of(c.get("huge", "shop").pod_resources.containers[0]) == [("memory", 1 << 30, [0])]


def test_a_kubelet_that_failed_to_restart_serves_unavailable_then_restarts_on_its_last_good_configuration(tmp_path):
    with serving(tmp_path) as (_, c):
        c.admit(pod("a", memory="3Gi"))
        before = c.list()
        with pytest.raises(grpc.RpcError) as err:  # the checkpoint is the Static policy's
            c.control.Restart(ctl.RestartRequest(kubelet="memoryManagerPolicy: None"))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        start_error = err.value.details()
        assert start_error.startswith('kubelet is not running: start memory manager error: could not restore state '
                                      'from checkpoint: [memorymanager] configured policy "None" differs from state '
                                      'checkpoint policy "Static"'), start_error
        calls = (c.list, c.allocatable, lambda: c.get("a"), c.list_alpha)
        for call in calls:
            with pytest.raises(grpc.RpcError) as err:
                call()
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE, call
            assert err.value.details() == start_error  # "kubelet is not running: <kubelet's start error>"
        c.control.Restart(ctl.RestartRequest())  # no fields: the last configuration that started
        assert c.list() == before
        c.control.Restart(ctl.RestartRequest(kubelet="topologyManagerPolicy: restricted"))  # on top of it, too
        assert c.list() == before
