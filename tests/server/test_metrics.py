"""/metrics scraped over HTTP and parsed with prometheus-client's parser: kubelet's names, labels
and buckets, values matching the node; `run --metrics FILE`."""
from __future__ import annotations

import io
import json
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

import memorymanager.cli.app as cli
from memorymanager.server.metrics import DURATION_BUCKETS, go_float
from memorymanager.server.protos.control import control_pb2 as ctl
from tests.server.serving import pod, serving


def scrape(server) -> tuple[str, dict[tuple[str, tuple], float], dict[str, str]]:
    host, port = server.metrics.address
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=120) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    return text, *parse(text)


def parse(text: str) -> tuple[dict[tuple[str, tuple], float], dict[str, str]]:
    """Samples by (name as exposed, sorted labels), and family types. prometheus-client's parser
    calls every counter sample `<family>_total`; kubelet's `_count` counters are named back."""
    exposed = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}
    samples: dict[tuple[str, tuple], float] = {}
    types: dict[str, str] = {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for s in family.samples:
            name = s.name
            if name not in exposed and name.endswith("_total") and name[:-6] in exposed:
                name = name[:-6]
            samples[(name, tuple(sorted(s.labels.items())))] = s.value
    return samples, types


def test_kubelet_metrics_count_admissions_pinning_and_alignment(tmp_path):
    with serving(tmp_path, metrics=True) as (server, c):
        _, samples, _ = scrape(server)
        assert samples[("kubelet_memory_manager_pinning_requests_total", ())] == 0
        assert samples[("kubelet_container_aligned_compute_resources_count",
                        (("boundary", "numa_node"), ("scope", "container")))] == 0
        assert not c.admit(pod("wide", memory="20Gi")).admitted  # only [0, 1] fits: single-numa-node refuses
        assert c.admit(pod("a", memory="2Gi", sidecar="proxy")).admitted  # two containers pinned
        c.control.WouldAdmit(ctl.AdmitRequest(pod=pod("trial")))  # a trial is no admission
        text, samples, types = scrape(server)
        assert samples[("kubelet_memory_manager_pinning_requests_total", ())] == 2
        assert samples[("kubelet_memory_manager_pinning_errors_total", ())] == 0
        assert samples[("kubelet_topology_manager_admission_requests_total", ())] == 2
        assert samples[("kubelet_topology_manager_admission_errors_total", ())] == 1
        assert samples[("kubelet_container_aligned_compute_resources_count",
                        (("boundary", "numa_node"), ("scope", "container")))] == 2
        assert samples[("kubelet_container_aligned_compute_resources_failure_count",
                        (("boundary", "numa_node"), ("scope", "container")))] == 1
        assert samples[("kubelet_topology_manager_admission_duration_ms_count", ())] == 2
        bounds = [float(b.split('le="')[1].split('"')[0]) for b in text.splitlines()
                  if b.startswith("kubelet_topology_manager_admission_duration_ms_bucket") and "+Inf" not in b]
        assert bounds == list(DURATION_BUCKETS) and len(bounds) == 15
        assert types["kubelet_topology_manager_admission_duration_ms"] == "histogram"
        assert "# HELP kubelet_memory_manager_pinning_requests_total [ALPHA] The number of memory pages " \
               "allocations which required pinning." in text
        # kubelet's exact names: the _count counters keep their names
        assert "# TYPE kubelet_container_aligned_compute_resources_count counter" in text


def test_numa_gauges_match_the_machine_state(tmp_path):
    with serving(tmp_path, metrics=True) as (server, c):
        c.admit(pod("a", memory="3Gi", hugepages="256Mi"))
        c.admit(pod("b", memory="1Gi"))
        _, samples, _ = scrape(server)
        state = server.host.node.machine_state()
        for numa, node in state.items():
            for resource, table in node.memory_map.items():
                labels = (("numa_node", str(numa)), ("resource", resource))
                assert samples[("memorymanager_numa_node_capacity_bytes", labels)] == table.total_mem_size
                assert samples[("memorymanager_numa_node_allocatable_bytes", labels)] == table.allocatable
                assert samples[("memorymanager_numa_node_reserved_bytes", labels)] == table.reserved
                assert samples[("memorymanager_numa_node_free_bytes", labels)] == table.free
        assert samples[("memorymanager_numa_node_containers", (("numa_node", "0"), ("resource", "memory")))] == 2
        assert samples[("memorymanager_numa_node_containers", (("numa_node", "0"), ("resource", "hugepages-2Mi")))] == 1


def test_restart_starts_the_counters_again(tmp_path):
    with serving(tmp_path, metrics=True) as (server, c):
        c.admit(pod("a"))
        c.control.Restart(ctl.RestartRequest())
        _, samples, _ = scrape(server)
        assert samples[("kubelet_topology_manager_admission_requests_total", ())] == 0
        assert samples[("memorymanager_numa_node_reserved_bytes", (("numa_node", "0"), ("resource", "memory")))] == 1 << 30
        c.admit(pod("b"))
        _, samples, _ = scrape(server)
        assert samples[("kubelet_memory_manager_pinning_requests_total", ())] == 1


def test_go_float_formats_as_client_golang():
    assert [go_float(v) for v in (0, 1, 2.0, 0.05, 819.2, 1e6, 17179869184, float("inf"))] == \
        ["0", "1", "2", "0.05", "819.2", "1e+06", "1.7179869184e+10", "+Inf"]


def test_run_metrics_file(tmp_path):
    doc = {"name": "m", "machine": {"topology": [{"node_id": 0, "memory": 4 << 30}, {"node_id": 1, "memory": 4 << 30}]},
           "kubelet": {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
                       "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]},
           "steps": [{"admit": json.loads(pod("a")), "expect": {"admitted": True}},
                     {"admit": json.loads(pod("b", memory="6Gi")), "expect": {"admitted": False}}]}
    path = tmp_path / "m.yaml"
    path.write_text(json.dumps(doc))
    out = tmp_path / "metrics.txt"
    code = cli.main(["run", str(path), "--metrics", str(out)], out=io.StringIO(), err=io.StringIO())
    assert code == 0
    samples, _ = parse(out.read_text())
    assert samples[("kubelet_topology_manager_admission_requests_total", ())] == 2
    assert samples[("kubelet_topology_manager_admission_errors_total", ())] == 1
    assert samples[("memorymanager_numa_node_reserved_bytes", (("numa_node", "0"), ("resource", "memory")))] == 1 << 30


def test_duration_histogram_buckets_are_cumulative():
    from memorymanager.server.metrics import KubeletMetrics, render

    metrics = KubeletMetrics()
    for ms in (0, 0, 1, 3, 1000):
        metrics.observe_duration(ms)
    text = render(metrics.families())
    samples, _ = parse(text)
    bucket = "kubelet_topology_manager_admission_duration_ms_bucket"
    assert samples[(bucket, (("le", "0.05"),))] == 2
    assert samples[(bucket, (("le", "1.6"),))] == 3
    assert samples[(bucket, (("le", "3.2"),))] == 4
    assert samples[(bucket, (("le", "819.2"),))] == 4
    assert samples[(bucket, (("le", "+Inf"),))] == 5
    assert samples[("kubelet_topology_manager_admission_duration_ms_sum", ())] == 1004
