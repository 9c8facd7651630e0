"""GetPodQOS (released summing algorithm, with the PodLevelResources branch)."""
import pytest

from kubeinputs.pod import parse_pod
from kubeinputs.qos import BEST_EFFORT, BURSTABLE, GUARANTEED, get_pod_qos


def res(requests=None, limits=None):
    out = {}
    if requests is not None:
        out["requests"] = requests
    if limits is not None:
        out["limits"] = limits
    return out


def pod(containers, init=(), pod_resources=None):
    spec = {"containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(containers)],
            "initContainers": [{"name": f"i{i}", "resources": r} for i, r in enumerate(init)]}
    if pod_resources is not None:
        spec["resources"] = pod_resources
    return parse_pod({"metadata": {"name": "p"}, "spec": spec})


G = {"cpu": "100m", "memory": "100Mi"}

CONTAINER_CASES = [
    ("no resources", pod([res()]), BEST_EFFORT),
    ("two containers without resources", pod([res(), res()]), BEST_EFFORT),
    ("only an extended resource", pod([res(limits={"nvidia.com/gpu": "1"})]), BEST_EFFORT),
    # hugepages alone are refused by API validation ("HugePages require cpu or memory"); a zero cpu limit passes it
    ("only hugepages", pod([res(limits={"cpu": "0", "hugepages-2Mi": "100Mi"})]), BEST_EFFORT),
    ("zero cpu and memory", pod([res(requests={"cpu": "0", "memory": "0"}, limits={"cpu": "0", "memory": "0"})]),
     BEST_EFFORT),
    ("limits only (defaulted requests)", pod([res(limits=G)]), GUARANTEED),
    ("requests equal limits", pod([res(requests=G, limits=G)]), GUARANTEED),
    ("equal in another notation", pod([res(requests={"cpu": "0.1", "memory": "104857600"}, limits=G)]), GUARANTEED),
    ("guaranteed with an extra resource", pod([res(limits={**G, "nvidia.com/gpu": "2", "hugepages-1Gi": "1Gi"})]),
     GUARANTEED),
    ("two guaranteed containers", pod([res(limits=G), res(limits={"cpu": "1", "memory": "1Gi"})]), GUARANTEED),
    ("guaranteed plus best-effort container", pod([res(limits=G), res()]), BURSTABLE),
    ("memory limit missing", pod([res(limits={"cpu": "100m"})]), BURSTABLE),
    ("requests below limits", pod([res(requests={"cpu": "50m", "memory": "100Mi"}, limits=G)]), BURSTABLE),
    ("requests only", pod([res(requests=G)]), BURSTABLE),
    ("zero memory limit", pod([res(requests={"cpu": "100m"}, limits={"cpu": "100m", "memory": "0"})]), BURSTABLE),
    ("guaranteed init container", pod([res(limits=G)], init=[res(limits=G)]), GUARANTEED),
    ("best-effort init container", pod([res(limits=G)], init=[res()]), BURSTABLE),
    ("burstable init container", pod([res(limits=G)], init=[res(requests={"memory": "10Mi"})]), BURSTABLE),
    ("init container alone sets the class", pod([res()], init=[res(requests={"cpu": "1"})]), BURSTABLE),
]


@pytest.mark.parametrize("name,the_pod,expected", CONTAINER_CASES, ids=[c[0] for c in CONTAINER_CASES])
@pytest.mark.parametrize("gate", [True, False])
def test_container_level(name, the_pod, expected, gate):
    assert get_pod_qos(the_pod, gate) == expected


POD_LEVEL_CASES = [
    ("pod limits cpu+memory", pod([res()], pod_resources=res(limits={"cpu": "1", "memory": "1Gi"})), GUARANTEED),
    ("pod requests equal limits", pod([res()], pod_resources=res(requests={"cpu": "1", "memory": "1Gi"},
                                                                  limits={"cpu": "1", "memory": "1Gi"})), GUARANTEED),
    ("pod limits without cpu", pod([res(limits=G)], pod_resources=res(limits={"memory": "1Gi"})), BURSTABLE),
    ("pod requests only", pod([res(limits=G)], pod_resources=res(requests={"cpu": "1", "memory": "1Gi"})), BURSTABLE),
    ("empty pod resources", pod([res(limits=G)], pod_resources={}), BEST_EFFORT),
    ("containers request less than pod limits",
     pod([res(requests={"memory": "512Mi"})], pod_resources=res(limits={"cpu": "1", "memory": "1Gi"})), BURSTABLE),
]


@pytest.mark.parametrize("name,the_pod,expected", POD_LEVEL_CASES, ids=[c[0] for c in POD_LEVEL_CASES])
def test_pod_level_resources_decide_when_the_gate_is_on(name, the_pod, expected):
    assert get_pod_qos(the_pod, True) == expected


def test_pod_level_resources_ignored_when_the_gate_is_off():
    the_pod = pod([res(limits=G)], pod_resources={})
    assert get_pod_qos(the_pod, False) == GUARANTEED
    the_pod = pod([res()], pod_resources=res(limits={"cpu": "1", "memory": "1Gi"}))
    assert get_pod_qos(the_pod, False) == BEST_EFFORT


def test_zero_limits_do_not_count_but_keep_the_pod_out_of_guaranteed():
    # a zero memory limit is ignored in the sums, yet the container lacks a positive memory limit
    the_pod = pod([res(limits=G), res(requests={"cpu": "100m"}, limits={"cpu": "100m", "memory": "0"})])
    assert get_pod_qos(the_pod, True) == BURSTABLE


REASON_CASES = [
    ("no cpu limit", pod([res(requests={"cpu": "1", "memory": "1Gi"}, limits={"memory": "1Gi"})]),
     "container 'c0' has no cpu limit"),
    ("no limits at all", pod([res(requests={"memory": "1Gi"})]), "container 'c0' has no cpu limit and no memory limit"),
    ("a zero memory limit", pod([res(limits={"cpu": "1", "memory": "0"})]), "container 'c0' has a memory limit of 0"),
    ("the first container without limits is named", pod([res(limits=G), res(requests={"cpu": "1"})]),
     "container 'c1' has no cpu limit and no memory limit"),
    ("requests below limits", pod([res(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "2Gi"})]),
     "the summed memory requests (1Gi) differ from the summed memory limits (2Gi)"),
    ("pod-level limits without cpu", pod([res()], pod_resources={"limits": {"memory": "1Gi"}}),
     "pod-level resources decide: the pod-level limits have no cpu limit"),
]


@pytest.mark.parametrize("name,the_pod,reason", REASON_CASES, ids=[c[0] for c in REASON_CASES])
def test_the_reason_names_what_is_missing(name, the_pod, reason):
    from kubeinputs.qos import get_pod_qos_explained

    qos, why = get_pod_qos_explained(the_pod, True)
    assert qos == BURSTABLE
    assert why == reason
