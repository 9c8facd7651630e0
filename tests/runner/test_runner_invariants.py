"""Runner invariants over random scenarios: runs are deterministic, a recorded run passes when run
again, and the production merge and the reference merge report the same results."""
import copy
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from memorymanager.runner.execute import merge_function, run_scenario
from memorymanager.runner.record import record_document
from memorymanager.runner.scenario import parse_scenario

GI = 1 << 30
MACHINE = {
    "num_cores": 4,
    "memory_capacity": 8 * GI,
    "topology": [
        {"node_id": n, "memory": 2 * GI, "cores": [{"core_id": n, "thread_ids": [n], "socket_id": 0}]}
        for n in range(4)
    ],
}


def container(name, mem_mi, init=False, sidecar=False):
    c = {"name": name, "resources": {"limits": {"cpu": "1", "memory": f"{mem_mi}Mi"}}}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


@st.composite
def pods(draw, index):
    apps = draw(st.lists(st.sampled_from([256, 512, 1024, 1536, 2048, 3072]), min_size=1, max_size=2))
    inits = draw(st.lists(st.tuples(st.sampled_from([512, 1024, 2560]), st.booleans()), max_size=2))
    spec = {"containers": [container(f"app{i}", m) for i, m in enumerate(apps)]}
    if inits:
        spec["initContainers"] = [container(f"init{i}", m, sidecar=s) for i, (m, s) in enumerate(inits)]
    return {"metadata": {"name": f"pod{index}"}, "spec": spec}


HINTS = st.lists(
    st.fixed_dictionaries(
        {"numaAffinity": st.one_of(st.none(), st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True).map(sorted)),
         "preferred": st.booleans()}
    ),
    max_size=3,
)


@st.composite
def scenarios(draw):
    steps = []
    admitted = []
    scope = draw(st.sampled_from(["container", "pod"]))
    for i in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["admit", "admit", "admit", "hints", "remove", "restart", "check"]))
        if op in ("admit", "hints"):
            pod = draw(pods(i))
            step = {op: pod}
            if op == "admit":
                admitted.append(pod)
                if draw(st.booleans()):
                    if scope == "container":  # only the node's scope's shape is valid
                        step["providers"] = {"containers": {c["name"]: {"cpu": draw(st.one_of(st.none(), HINTS))}
                                                            for c in pod["spec"]["containers"]}}
                    else:
                        step["providers"] = {"pod": {"cpu": draw(st.one_of(st.none(), HINTS))}}
            steps.append(step)
        elif op == "remove" and admitted:
            pod = draw(st.sampled_from(admitted))
            names = [c["name"] for c in pod["spec"]["containers"]]
            steps.append({"remove": {"pod": pod["metadata"]["name"], "container": draw(st.one_of(st.none(), st.sampled_from(names)))}})
        elif op == "restart":
            steps.append({"restart": {}})
        else:
            steps.append({"check": {}})
    kubelet = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
        "topologyManagerPolicy": draw(st.sampled_from(["none", "best-effort", "restricted", "single-numa-node"])),
        "topologyManagerScope": scope,
    }
    return {"name": "random", "machine": MACHINE, "kubelet": kubelet, "steps": steps}


def run(doc, merge_fn=None):
    scenario = parse_scenario(copy.deepcopy(doc), base_dir=".")
    with tempfile.TemporaryDirectory() as state_dir:
        return scenario, run_scenario(scenario, state_dir, merge_fn)


@settings(max_examples=40, deadline=None)
@given(scenarios())
def test_recorded_runs_pass_and_runs_are_deterministic(doc):
    scenario, first = run(doc)
    assert all(s.actual.get("error") is None for s in first.steps), [s.actual.get("error") for s in first.steps]
    recorded = record_document(scenario, first)
    _, again = run(recorded)
    assert again.status == "passed", [f.to_dict() for s in again.steps for f in s.failures]
    assert [s.actual for s in again.steps] == [s.actual for s in first.steps]


@settings(max_examples=40, deadline=None)
@given(scenarios())
def test_reference_merge_reports_the_same(doc):
    _, fast = run(doc)
    _, reference = run(doc, merge_function("reference"))
    assert [s.actual for s in fast.steps] == [s.actual for s in reference.steps]
