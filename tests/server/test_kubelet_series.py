"""Kubelet's series: the registry against kubelet's own list (fixtures/metrics), the PodResources
counts over the real socket as kubelet's servers count them, and `promtool check metrics` on a
real scrape where Debian's `prometheus` package provides promtool (skipped otherwise)."""
from __future__ import annotations

import shutil
import subprocess
from concurrent import futures

import grpc
import pytest
import yaml

import memorymanager
from memorymanager.server.host import NodeHost
from memorymanager.server.kubelet_series import ADMISSION_DURATION_MS_BUCKETS, SERIES
from memorymanager.server.metrics import KubeletMetrics, render
from memorymanager.server.podresources import PodResourcesV1, TokenBucket
from memorymanager.server.protos.control import control_pb2 as ctl
from memorymanager.server.protos.v1 import api_pb2 as v1
from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc
from tests.helpers.paths import FIXTURES
from tests.server.serving import STATIC, machine, pod, serving
from tests.server.test_metrics import scrape

KUBELET = yaml.safe_load((FIXTURES / "metrics" / "kubelet-resource-manager-series.yaml").read_text())
LISTED = {entry["name"]: entry for entry in KUBELET["series"]}
PR = "kubelet_pod_resources_endpoint_"


def test_the_registry_is_kubelets_list():
    assert sorted(s.name for s in SERIES) == sorted(LISTED)
    for s in SERIES:
        entry = LISTED[s.name]
        assert (s.type, s.help, sorted(s.labels), s.gate) == \
            (entry["type"], entry["help"], sorted(entry["labels"]), entry.get("gate", "")), s.name
        if "buckets" in entry and "list" in entry["buckets"]:
            assert s.buckets == tuple(entry["buckets"]["list"])
        elif "buckets" in entry:
            rule = entry["buckets"]["exponential"]
            assert s.buckets == tuple(rule["start"] * rule["factor"] ** k for k in range(rule["count"]))
        else:
            assert s.buckets == ()
    assert ADMISSION_DURATION_MS_BUCKETS[0] == 0.05 and ADMISSION_DURATION_MS_BUCKETS[-1] == 819.2


def test_the_page_shows_every_exported_series_as_kubelet_types_and_helps_it(tmp_path):
    with serving(tmp_path, metrics=True) as (server, c):
        c.admit(pod("a"))
        c.list(), c.allocatable(), c.get("a"), c.list_alpha()
        text, _, _ = scrape(server)
    typed = {line.split()[2]: line.split()[3] for line in text.splitlines() if line.startswith("# TYPE ")}
    helped = {line.split()[2]: line.split(" ", 3)[3] for line in text.splitlines() if line.startswith("# HELP ")}
    exported = [s for s in SERIES if s.exported]
    missing = {s.name for s in exported} - set(typed) - {PR + "errors_list", PR + "errors_get_allocatable",
                                                          PR + "errors_get",  # no error was answered
                                                          "kubelet_cpu_manager_allocation_per_numa",
                                                          "kubelet_device_plugin_registration_total"}
    assert missing == set()
    for s in exported:
        if s.name in typed:
            assert typed[s.name] == s.type and helped[s.name] == "[ALPHA] " + s.help
    assert "kubelet_cpu_manager_allocation_per_numa" not in typed  # the CPU manager's `none` policy: no children
    assert "kubelet_device_plugin_registration_total" not in typed  # no device plugin registered
    names = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    assert names == sorted(names)  # client_golang gathers families sorted by name


def samples_of(server):
    _, samples, _ = scrape(server)
    return {(name, dict(labels).get("server_api_version")): v for (name, labels), v in samples.items()
            if name.startswith(PR)}


def test_podresources_calls_are_counted_as_kubelet_counts_them(tmp_path):
    with serving(tmp_path, metrics=True) as (server, c):
        assert samples_of(server) == {}  # counter vectors start without children
        c.admit(pod("a"))
        c.list(), c.list(), c.allocatable(), c.get("a"), c.list_alpha()
        with pytest.raises(grpc.RpcError):
            c.get("ghost")
        assert samples_of(server) == {
            (PR + "requests_total", "v1"): 5, (PR + "requests_total", "v1alpha1"): 1,
            (PR + "requests_list", "v1"): 2, (PR + "requests_get_allocatable", "v1"): 1,
            (PR + "requests_get", "v1"): 2, (PR + "errors_get", "v1"): 1,
        }
        c.control.Restart(ctl.RestartRequest())  # a new kubelet process: counters from zero
        assert samples_of(server) == {}
        c.list()
        assert samples_of(server) == {(PR + "requests_total", "v1"): 1, (PR + "requests_list", "v1"): 1}


def test_get_series_are_registered_only_with_the_gate(tmp_path):
    kubelet = dict(STATIC, featureGates={"KubeletPodResourcesGet": False})
    with serving(tmp_path, kubelet, metrics=True) as (server, c):
        with pytest.raises(grpc.RpcError):
            c.get("a")  # PodResources API Get method disabled
        assert samples_of(server) == {(PR + "requests_total", "v1"): 1}


def test_a_call_the_rate_limit_rejects_is_not_counted(tmp_path):
    host = NodeHost(memorymanager.Node(machine(), STATIC))
    limiter = TokenBucket(qps=0.0, burst=1)  # one call, then none: no clock involved
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    v1_grpc.add_PodResourcesListerServicer_to_server(PodResourcesV1(host, None, limiter, host.metrics), server)
    socket = f"unix:{tmp_path}/pr.sock"
    server.add_insecure_port(socket)
    server.start()
    try:
        with grpc.insecure_channel(socket) as channel:
            stub = v1_grpc.PodResourcesListerStub(channel)
            stub.List(v1.ListPodResourcesRequest(), timeout=10)
            with pytest.raises(grpc.RpcError) as err:
                stub.List(v1.ListPodResourcesRequest(), timeout=10)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        server.stop(0)
    counts = host.metrics.snapshot().pod_resources
    assert counts == {(PR + "requests_total", "v1"): 1, (PR + "requests_list", "v1"): 1}


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian: apt-get install prometheus)")
def test_promtool_accepts_the_page_and_lints_only_kubelets_own_names(tmp_path):
    with serving(tmp_path, metrics=True) as (server, c):
        c.admit(pod("a", hugepages="256Mi"))
        c.list(), c.allocatable(), c.get("a"), c.list_alpha()
        with pytest.raises(grpc.RpcError):
            c.get("ghost")
        text, _, _ = scrape(server)
    run = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    problems = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    # exit 0: clean; 3: lint problems only; anything else (1: the page does not parse) fails
    assert run.returncode in (0, 3), problems
    linted = {line.split()[0] for line in problems}
    kubelet_names = {s.name for s in SERIES}
    assert linted <= kubelet_names, linted - kubelet_names  # our own gauges lint clean
    # the names promtool flags are the ones kubelet itself exports against the conventions
    assert PR + "requests_list" in linted and "kubelet_topology_manager_admission_duration_ms" in linted


def test_render_of_a_fresh_recorder_has_no_podresources_families():
    text = render(KubeletMetrics().families())
    assert PR not in text and "kubelet_topology_manager_admission_requests_total 0" in text
