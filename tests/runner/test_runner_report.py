"""The human report: `run -v` step accounts, and the hint after a reservedMemory start error."""
import io
import json

from memorymanager.runner.execute import run_file, run_paths
from memorymanager.runner.report import scenario_lines, size_text, step_lines, write_human, write_json
from tests.helpers.scenarios import TWO_NODE_MACHINE

HUGE_MACHINE = {
    "num_cores": 2, "memory_capacity": 8589934592,
    "topology": [{"node_id": n, "memory": 4294967296, "hugepages": [{"page_size": 2048, "num_pages": 512}]}
                 for n in (0, 1)],
}
STATIC = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "restricted",
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def pod(name, memory="1Gi", **more):
    limits = {"cpu": "1", "memory": memory, **more}
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "app", "resources": {"limits": limits}}]}}


def run(tmp_path, steps, machine=TWO_NODE_MACHINE, kubelet=STATIC):
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps({"name": "s", "machine": machine, "kubelet": kubelet, "steps": steps}))
    return run_file(str(path))


def test_size_text_is_a_kubernetes_quantity():
    assert [size_text(n) for n in (1 << 30, 6 << 30, 3 << 29, 64 << 20, 100)] == ["1Gi", "6Gi", "1536Mi", "64Mi", "100"]


def test_verbose_lines_tell_each_steps_decision_and_each_containers_numa_memory(tmp_path):
    result, scenario = run(tmp_path, [
        {"start": {}},
        {"admit": pod("big", "5Gi")},  # no single node holds it: the two nodes as one group
        {"remove": {"pod": "big"}},
        {"admit": pod("small", "1Gi", **{"hugepages-2Mi": "64Mi"})},
        {"admit": {"metadata": {"name": "burstable"},
                   "spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": "1Gi"}}}]}}},
    ], machine=HUGE_MACHINE, kubelet={**STATIC, "topologyManagerPolicy": "best-effort"})
    lines = scenario_lines(result, scenario, verbose=True)
    assert lines == [
        f"ok      {result.file}  (s)",
        "    steps[0] start: started",
        "    steps[1] admit big: admitted",
        "        app: NUMA nodes [0, 1]; memory 5Gi",
        "    steps[2] remove big: removed",
        "    steps[3] admit small: admitted",
        "        app: NUMA nodes [0]; memory 1Gi, hugepages-2Mi 64Mi",
        "    steps[4] admit burstable: admitted",
        "        app: no NUMA nodes; no memory pinned",
    ]
    # without -v only the scenario's line
    assert scenario_lines(result, scenario) == lines[:1]


def test_verbose_lines_of_a_refusal_and_of_an_error(tmp_path):
    providers = {"containers": {"app": {"cpu": []}}}  # no NUMA affinity possible: restricted refuses
    result, scenario = run(tmp_path, [
        {"admit": pod("p"), "providers": providers},
        {"remove": {"pod": "p", "container": "app"}},
    ])
    first = step_lines(result.steps[0], scenario.steps[0])
    assert first == ["steps[0] admit p: refused: TopologyAffinityError: Resources cannot be allocated with Topology locality"]
    assert step_lines(result.steps[1], scenario.steps[1]) == ["steps[1] remove p container app: removed"]
    failing, scenario = run(tmp_path, [{"check": {}}], kubelet={"memoryManagerPolicy": "Static"})
    [line] = step_lines(failing.steps[0], scenario.steps[0])
    assert line.startswith("steps[0] check: error: the node is not running (start failed: the total amount ")


def test_verbose_lines_say_init_memory_was_taken_and_later_released(tmp_path):
    def init_pod(name, init, app):
        limits = lambda size: {"limits": {"cpu": "1", "memory": size}}  # noqa: E731
        return {"metadata": {"name": name}, "spec": {
            "initContainers": [{"name": "init", "resources": limits(init)}],
            "containers": [{"name": "app", "resources": limits(app)}, {"name": "tail", "resources": limits("1Gi")}]}}

    result, scenario = run(tmp_path, [{"admit": init_pod("job", "3Gi", "1Gi")}, {"admit": init_pod("two", "1Gi", "1Gi")}])
    assert step_lines(result.steps[0], scenario.steps[0]) == [
        "steps[0] admit job: admitted",
        "    init: took memory 3Gi on NUMA nodes [0] at admission; released when app was created "
        "(later containers re-use memory 2Gi of it)",
        "    app: NUMA nodes [0]; memory 1Gi",
        "    tail: NUMA nodes [0]; memory 1Gi",
    ]
    # the init container's memory was really released: node 0 holds app and tail only
    assert result.steps[1].actual["memory"]["init"] is None
    assert "(later containers re-use memory 1Gi of it)" in step_lines(result.steps[1], scenario.steps[1])[1]


def test_cli_run_verbose(tmp_path):
    import memorymanager.cli.app as cli

    path = tmp_path / "s.yaml"
    path.write_text(json.dumps({"machine": TWO_NODE_MACHINE, "kubelet": STATIC,
                                "steps": [{"admit": pod("p"), "expect": {"admitted": True}}]}))
    out = io.StringIO()
    assert cli.main(["run", "-v", str(path)], out=out, err=io.StringIO()) == 0
    assert out.getvalue().splitlines() == [
        f"ok      {path}  (s)",
        "    steps[0] admit p: admitted",
        "        app: NUMA nodes [0]; memory 1Gi",
        "1 passed, 0 failed, 0 invalid",
    ]


# -- the reservedMemory hint ---------------------------------------------------------------------------------
MISMATCH = {"memoryManagerPolicy": "Static", "systemReserved": {"memory": "1Gi"}, "kubeReserved": {"memory": "512Mi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}
KUBELET_MESSAGE = ('the total amount "1Gi" of type "memory" is not equal to the value "1636Mi" determined by Node '
                   'Allocatable feature')
HINT = ("hint: reservedMemory of type memory, summed over the NUMA nodes, must equal the Node Allocatable reservation: "
        "reservedMemory total 1Gi (1073741824 bytes) != systemReserved 1Gi + kubeReserved 512Mi + evictionHard "
        "memory.available 100Mi (kubelet's default) = 1636Mi (1715470336 bytes)")


def test_reserved_memory_start_error_is_kubelets_message_followed_by_a_hint(tmp_path):
    result, _ = run(tmp_path, [{"start": {}}, {"check": {}}], kubelet=MISMATCH)
    assert result.steps[0].actual["error"] == KUBELET_MESSAGE  # the compared text is kubelet's, unchanged
    lines = scenario_lines(result)
    assert lines[1:5] == [
        f"    {result.file}: steps[0] (start): error",
        "        expected: null",
        f"        actual:   {json.dumps(KUBELET_MESSAGE)}",
        f"    {HINT}",
    ]
    assert lines.count(f"    {HINT}") == 1  # once, not again for the steps that find the node not running
    out = io.StringIO()
    write_json(run_paths([result.file]), out)
    assert "hint" not in out.getvalue()


def test_hint_with_an_expected_error_and_a_percentage_threshold(tmp_path):
    kubelet = {**MISMATCH, "systemReserved": {}, "kubeReserved": {}, "evictionHard": {"memory.available": "10%"}}
    result, _ = run(tmp_path, [{"start": {}, "expect": {"error": "determined by Node Allocatable feature"}}],
                    kubelet=kubelet)
    assert result.status == "passed"
    assert scenario_lines(result) == [f"ok      {result.file}  (s)"]  # a passing step shows nothing more
    [hint] = result.steps[0].notes
    assert "systemReserved 0 + kubeReserved 0 + evictionHard memory.available 858993472 (10% of 8589934592 bytes)" in hint
    out = io.StringIO()
    write_human(run_paths([result.file]), out, verbose=True)
    assert f"    {hint}\n" in out.getvalue()


def test_no_hint_for_other_start_errors(tmp_path):
    result, _ = run(tmp_path, [{"start": {}}], kubelet={"topologyManagerPolicy": "sideways"})
    assert "sideways" in result.steps[0].actual["error"] and result.steps[0].notes == []


def test_an_unknown_memory_manager_policy_keeps_kubelets_message_and_gets_the_policy_names(tmp_path):
    result, _ = run(tmp_path, [{"start": {}}], kubelet={"memoryManagerPolicy": "static"})
    assert result.steps[0].actual["error"] == 'unknown policy: "static"'  # kubelet's text, as it is
    assert result.steps[0].notes == ['hint: memoryManagerPolicy is "static"; kubelet\'s memory manager policies are '
                                     '"None" and "Static", spelled exactly so']
    assert f"    {result.steps[0].notes[0]}" in scenario_lines(result)
