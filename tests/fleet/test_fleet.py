"""The fleet simulation: engines and worker counts agree, a bound trace split by node equals the
nodes replayed one by one, numa-aware placement follows the filter, and bad input is one clear
error."""
from __future__ import annotations

import json
import os
from io import StringIO

import pytest

from kubeinputs.qos import get_pod_qos
from memorymanager.cli.app import main
from memorymanager.fleet.engines import execute, plan
from memorymanager.fleet.nrt_filter import filter_pod
from memorymanager.fleet.fleetnode import without_cpu
from memorymanager.fleet.simulate import Simulation, SimulationObserver
from memorymanager.fleet.spec import load_fleet
from memorymanager.fleet.summary import build_summary, dumps
from memorymanager.fleet.trace import is_bound, load_trace
from memorymanager.node.api import Node, read_kubelet, read_machine

FLEETS = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "fleets")
BOUND = os.path.join(FLEETS, "bound.yaml")
SWEEP = os.path.join(FLEETS, "sweep.yaml")


def summary_text(path, **engine):
    spec = load_fleet(path)
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    results = execute(spec, events, **engine)
    return dumps(build_summary(spec, results, events=len(events), bound=is_bound(events)))


@pytest.fixture(scope="module")
def local_summaries():
    return {path: summary_text(path) for path in (BOUND, SWEEP)}


def test_fixture_fleets_do_something(local_summaries):
    bound = json.loads(local_summaries[BOUND])
    sweep = json.loads(local_summaries[SWEEP])
    assert bound["trace"]["bound"] and not sweep["trace"]["bound"]
    assert bound["variants"][0]["pods"]["admitted"] > 0
    assert bound["variants"][0]["refusals"]  # kubelet refuses some bound pods
    names = [v["name"] for v in sweep["variants"]]
    assert names == ["single-numa-node", "single-numa-node/pod", "restricted", "best-effort"]
    assert any(v["disagreements"] for v in sweep["variants"])


@pytest.mark.parametrize("workers", [2, 3])
def test_local_worker_counts_agree(local_summaries, workers):
    for path in (BOUND, SWEEP):
        assert summary_text(path, workers=workers) == local_summaries[path]


def test_chunking_does_not_change_results(local_summaries):
    spec = load_fleet(BOUND)
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    for chunks in (2, 4, 100):
        tasks = plan(spec, events, chunks)
        assert len(tasks) == min(chunks, len(spec.node_names())) * len(spec.variants)
        from memorymanager.fleet.engines import run_task
        results = [run_task(t) for t in tasks]
        text = dumps(build_summary(spec, results, events=len(events), bound=True))
        assert text == local_summaries[BOUND]


@pytest.fixture(scope="module")
def dask_clusters():
    distributed = pytest.importorskip("distributed")
    processes = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                         dashboard_address=":0", silence_logs=40)
    threads = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                                       dashboard_address=":0", silence_logs=40)
    yield {"processes": processes.scheduler_address, "threads": threads.scheduler_address}
    threads.close()
    processes.close()


@pytest.mark.parametrize("kind", ["processes", "threads"])
def test_dask_equals_local(local_summaries, dask_clusters, kind):
    for path in (BOUND, SWEEP):
        text = summary_text(path, engine="dask", workers=2, scheduler=dask_clusters[kind])
        assert text == local_summaries[path]


def test_bound_trace_equals_nodes_one_by_one(local_summaries):
    """Each node alone, driven through the public Node API with its own events, ends with the
    same admissions, refusals and free memory as in the fleet run."""
    spec = load_fleet(BOUND)
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    fleet_run = Simulation(spec, spec.variants[0]).run(events)
    by_name = {n.name: n for n in fleet_run.nodes}
    groups = spec.group_of()
    for name in spec.node_names():
        group = groups[name]
        node = Node(read_machine(dict(group.machine)), read_kubelet(dict(group.kubelet)))
        admitted, refused, active = 0, 0, {}
        for event in events:
            if event.op == "add" and event.node == name:
                answer = node.admit(event.pod)
                if answer.admitted:
                    admitted += 1
                    active[event.key] = event.pod.uid
                else:
                    refused += 1
            elif event.op == "delete" and event.key in active:
                node.remove(active.pop(event.key))
        result = by_name[name]
        assert result.admitted == admitted
        assert sum(sum(m.values()) for m in result.refusals.values()) == refused
        assert {numa: {r: free for r, (_, free) in res.items()} for numa, res in result.numa.items()} == node.free()


def test_numa_aware_places_only_where_the_filter_fits():
    """Replaying the sweep fleet: every unbound pod lands on the first node (fleet order) that
    passes node fit and the filter; nodes the filter refuses are never tried."""
    spec = load_fleet(SWEEP)
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    tried, admits = [], []

    class Watch(SimulationObserver):
        def filtered(self, node, ask, fits):
            # these nodes' CPU manager pins nothing (policy none), so their NRT lists no cpu: the filter
            # is asked about every request but cpu, with the QoS class of the whole pod
            pod = next(e.pod for e in events if e.pod is not None and e.pod.name == ask.pod.name)
            assert not node.lists_cpu and ask.pod == pod
            assert (ask.for_node(False)[0], ask.qos) == (without_cpu(pod), get_pod_qos(pod, True))
            assert fits == filter_pod(without_cpu(pod), node.nrt(), node.allocatable, qos=ask.qos).fits
            tried.append((ask.pod.name, node.name, fits))

        def kubelet_answered(self, node, pod, answer):
            last = [t for t in tried if t[0] == pod.name]
            assert last and last[-1][1] == node.name and last[-1][2], "kubelet was asked on a node the filter refused"
            admits.append(node.name)

    sim = Simulation(spec, spec.variants[0], observer=Watch())
    sim.run(events)
    assert admits and any(not fits for _, _, fits in tried)


def run_cli(*argv):
    out, err = StringIO(), StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_writes_summary_and_report(tmp_path, local_summaries):
    code, out, err = run_cli("fleet", SWEEP, "--out", str(tmp_path), "--no-progress")
    assert code == 0, err
    assert "single-numa-node/pod" in out and "disagree" in out
    assert (tmp_path / "summary.json").read_text() == local_summaries[SWEEP]
    html = (tmp_path / "report.html").read_text()
    assert html.count("<svg") == 1 + 4 and "<script" not in html


def test_cli_dask_localcluster_threads(local_summaries):
    code, out, err = run_cli("fleet", BOUND, "--engine", "dask", "--workers", "2", "--threads", "--json", "--no-progress")
    assert code == 0, err
    assert out == local_summaries[BOUND]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


FLEET_HEAD = """
nodes:
- name: a
  count: 2
  machine: {numaNodes: 2, memoryPerNode: 4Gi}
  kubelet: {memoryManagerPolicy: Static, topologyManagerPolicy: single-numa-node,
            reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]}
trace: t.jsonl
"""


@pytest.mark.parametrize("fleet,trace,message", [
    ("nodes: []\ntrace: t.jsonl\n", "", "nodes: expected at least one node group"),
    (FLEET_HEAD + "placement: best-fit\n", "", "placement: unknown rule 'best-fit'"),
    (FLEET_HEAD.replace("count: 2", "count: two"), "", "nodes[0].count: expected an integer"),
    (FLEET_HEAD.replace("memoryPerNode: 4Gi", "memoryPerNode: lots"), "", "nodes[0].machine.memoryPerNode"),
    (FLEET_HEAD.replace("reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]", "reservedMemory: []"), "",
     "kubelet does not start on group 'a'"),
    (FLEET_HEAD, "{not json\n", "t.jsonl:1: not valid JSON"),
    (FLEET_HEAD, '{"time": 0, "delete": "x"}\n', "t.jsonl:1: delete of pod default/x, which is not active"),
    (FLEET_HEAD, '{"add": {"metadata": {"name": "p"}, "spec": {"containers": []}}, "nodeName": "a-0"}\n',
     "t.jsonl:1.add.spec.containers: Required value"),
    (FLEET_HEAD, '{"add": {"template": "nope", "name": "p"}}\n', "unknown template 'nope'"),
    (FLEET_HEAD, '{"add": {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}, "nodeName": "b-0"}\n',
     "no node 'b-0' in the fleet"),
    (FLEET_HEAD + "sweep:\n- name: x\n  kubelet: {topologyManagerPolicy: sideways}\n", "", "sweep[0]"),
])
def test_bad_input_is_one_clear_line(tmp_path, fleet, trace, message):
    write(tmp_path, "t.jsonl", trace)
    path = write(tmp_path, "fleet.yaml", fleet)
    code, out, err = run_cli("fleet", path, "--no-progress")
    assert code == 2
    assert message in err, err
    assert "Traceback" not in err and err.count("\n") == 1


def test_scheduler_without_dask_engine_is_a_usage_error():
    code, _, err = run_cli("fleet", BOUND, "--scheduler", "tcp://127.0.0.1:8786")
    assert code == 2 and "--scheduler only makes sense with --engine dask" in err


def rule_fleet(tmp_path, placement):
    write(tmp_path, "t.jsonl", "".join(
        json.dumps({"time": i, "add": {"metadata": {"name": f"p{i}"}, "spec": {"containers": [
            {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}}) + "\n" for i in range(3)))
    return load_fleet(write(tmp_path, "fleet.yaml", FLEET_HEAD + f"placement: {placement}\n"))


def placements(spec):
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    sim = Simulation(spec, spec.variants[0])
    sim.run(events)
    return [sim.bound_to[f"default/p{i}"] for i in range(3)]


def test_first_fit_fills_the_first_node(tmp_path):
    assert placements(rule_fleet(tmp_path, "first-fit")) == ["a-0", "a-0", "a-0"]


def test_least_allocated_spreads(tmp_path):
    assert placements(rule_fleet(tmp_path, "least-allocated")) == ["a-0", "a-1", "a-0"]


def test_on_refusal_fail_does_not_retry(tmp_path):
    # 3Gi pods on 2 x 4Gi NUMA nodes: the third does not fit one NUMA node of a-0 (fits at node level)
    trace = "".join(json.dumps({"time": i, "add": {"metadata": {"name": f"p{i}"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "3Gi"}}}]}}}) + "\n" for i in range(2))
    trace += json.dumps({"time": 5, "add": {"metadata": {"name": "late"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1536Mi"}}}]}}}) + "\n"
    write(tmp_path, "t.jsonl", trace)
    for rule, failed, admitted in (("fail", 1, 2), ("retry", 0, 3)):
        spec = load_fleet(write(tmp_path, "fleet.yaml", FLEET_HEAD + f"placement: first-fit\nonRefusal: {rule}\n"))
        events = load_trace(spec.trace, spec.templates, spec.node_names())
        summary = build_summary(spec, execute(spec, events), events=len(events), bound=False)
        variant = summary["variants"][0]
        assert (variant["pods"]["failed"], variant["pods"]["admitted"], variant["disagreements"]) == (failed, admitted, 1)


def guaranteed(name, cpu, memory):
    return {"metadata": {"name": name}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": cpu, "memory": memory}}}]}}


def test_nrt_of_a_fleet_node_drives_the_filter():
    """The NRT the updater (NFD v0.19) would publish for a fleet node: Guaranteed pods are drawn
    down, so the filter refuses what no NUMA node holds, a fractional-CPU pod's memory included."""
    from memorymanager.fleet.fleetnode import FleetNode, pod_requests
    from memorymanager.fleet.trace import _pod

    spec = load_fleet(SWEEP)
    group = spec.groups[0]
    node = FleetNode.build("duo-0", "duo", read_machine(dict(group.machine)), read_kubelet(dict(group.kubelet)))

    def fits(manifest):
        p = _pod(manifest, "pod")
        return filter_pod(without_cpu(p), node.nrt(), node.allocatable, qos=get_pod_qos(p, True)).fits

    for i, cpu in enumerate(("2", "2")):
        p = _pod(guaranteed(f"big{i}", cpu, "3Gi"), "pod")
        assert node.admit(f"default/big{i}", p, pod_requests(p)).admitted
    zones = {z["name"]: {r["name"]: r["available"] for r in z["resources"]} for z in node.nrt()["zones"]}
    assert set(zones) == {"node-0", "node-1"} and all(set(r) == {"memory"} for r in zones.values())
    assert not fits(guaranteed("next", "1", "1536Mi"))
    assert fits(guaranteed("small", "1", "512Mi"))
    node.delete("default/big1")
    p = _pod(guaranteed("frac", "1500m", "3Gi"), "pod")
    assert node.admit("default/frac", p, pod_requests(p)).admitted
    assert not fits(guaranteed("next", "1", "1536Mi"))  # the NRT shows node-1 taken, as kubelet has it
    assert not node.node.would_admit(_pod(guaranteed("next", "1", "1536Mi"), "pod")).admitted


def test_templates_overrides_and_delete_forms(tmp_path):
    from memorymanager.fleet.trace import parse_trace

    templates = {"t": guaranteed("t", "1", "1Gi")}
    lines = [
        json.dumps({"time": 2, "add": {"template": "t", "name": "a", "namespace": "ns",
                                       "overrides": {"metadata": {"labels": {"x": "y"}}}}}),
        json.dumps({"time": 1, "add": {"template": "t", "name": "b", "overrides": {"spec": {"containers": [
            {"name": "c", "resources": {"limits": {"cpu": "2", "memory": "2Gi"}}}]}}}}),
        json.dumps({"time": 3, "delete": "ns/a"}),
        json.dumps({"time": 3, "delete": {"name": "b"}}),
    ]
    events = parse_trace(lines, "t.jsonl", templates, [])
    assert [(e.op, e.key) for e in events] == [("add", "default/b"), ("add", "ns/a"), ("delete", "ns/a"), ("delete", "default/b")]
    assert events[0].pod.containers[0].resources.requests["memory"].value == 2 << 30
    assert events[1].pod.uid == "ns/a"
    assert events[0].pod.uid == "b"  # the one identity rule: the name in namespace default


def test_pods_of_one_name_in_two_namespaces_are_two_pods_on_a_fleet_node():
    from memorymanager.fleet.fleetnode import FleetNode, pod_requests
    from memorymanager.fleet.trace import parse_trace

    spec = load_fleet(SWEEP)
    group = spec.groups[0]
    node = FleetNode.build("duo-0", "duo", read_machine(dict(group.machine)), read_kubelet(dict(group.kubelet)))
    lines = [json.dumps({"time": 0, "add": dict(guaranteed("db", "1", "3Gi"), metadata={"name": "db", "namespace": ns})})
             for ns in ("prod", "staging")]
    events = parse_trace(lines, "t.jsonl", {}, [])
    for event in events:
        assert node.admit(event.key, event.pod, pod_requests(event.pod)).admitted
    assert [(p.namespace, p.uid) for p in node.node.active_pods()] == [("prod", "prod/db"), ("staging", "staging/db")]
    assert node.delete("staging/db")
    assert [p.uid for p in node.node.active_pods()] == ["prod/db"]
