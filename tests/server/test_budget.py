"""The per-request work budget of control requests (issue 27): past a limit, RESOURCE_EXHAUSTED naming
the limit, its reason and how to raise it; within it, an answer."""
from __future__ import annotations

import json

import grpc
import pytest

from kubeinputs import limits
from memorymanager.server import budget
from memorymanager.server.protos.control import control_pb2 as ctl
from tests.server.serving import serving


def big(containers: int = 1, inits: int = 0) -> str:
    def c(name):
        return {"name": name, "resources": {"limits": {"cpu": "1", "memory": "1Mi"}}}

    spec = {"containers": [c(f"c{i}") for i in range(containers)]}
    if inits:
        spec["initContainers"] = [c(f"i{i}") for i in range(inits)]
    return json.dumps({"metadata": {"name": "big"}, "spec": spec})


def hints_for(n: int) -> str:
    return json.dumps({"c0": {"cpu": [{"numaAffinity": [k % 2], "preferred": True} for k in range(n)]}})


LOW_LIMITS = limits.Limits(max_request_containers=40, max_request_init_containers=20, max_explain_containers=10,
                           max_request_hints=30)


CASES = [
    ("Admit", dict(pod=big(1, 21)), "init containers in the pod: 21", "max-request-init-containers"),
    ("WouldAdmit", dict(pod=big(30, 11)), "containers in the pod (init containers included): 41",
     "max-request-containers"),
    ("Explain", dict(pod=big(11)), "containers in the pod to explain (init containers included): 11",
     "max-explain-containers"),
    ("Admit", dict(pod=big(1), hints=hints_for(31)), "hints in the request: 31", "max-request-hints"),
    ("Hints", dict(pod=big(41)), "containers in the pod (init containers included): 41", "max-request-containers"),
]


@pytest.mark.parametrize("isolate", [False, True])
def test_requests_past_the_budget_are_refused_naming_the_limit(tmp_path, isolate):
    with serving(tmp_path, isolate=isolate, limits=LOW_LIMITS) as (_, c):
        for method, fields, what, name in CASES:
            request = (ctl.ExplainRequest if method == "Explain" else ctl.HintsRequest if method == "Hints"
                       else ctl.AdmitRequest)(**fields)
            with pytest.raises(grpc.RpcError) as err:
                getattr(c.control, method)(request, timeout=30)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.value.details()
            details = err.value.details()
            assert details.startswith(what + ", past the work budget of a control request"), details
            assert f"({name}: " in details and f"raise it with --limit {name}=N" in details
        # at the limits themselves: answered
        assert c.control.Admit(ctl.AdmitRequest(pod=big(1, 20), hints=hints_for(30))).admitted
        assert "big" in c.control.Explain(ctl.ExplainRequest(pod=big(10))).explanation
        assert len(c.control.Hints(ctl.HintsRequest(pod=big(20, 20))).containers) == 40


def test_the_budget_counts_what_the_api_server_would_read():
    doc = json.loads(big(3, 2))
    assert budget.container_counts(doc) == (3, 2)
    assert budget.container_counts({"spec": {"containers": "not a list"}}) == (0, 0)  # the parser refuses it
    assert budget.hint_count({"cpu": [1, 2], "app": {"cpu": [1], "gpu": [1, 2, 3]}}) == 6
    assert budget.is_small(doc) and not budget.is_small(json.loads(big(30, 3)))


def test_the_limits_can_be_raised_on_the_command_line():
    assert {"max-request-containers", "max-request-init-containers", "max-explain-containers",
            "max-request-hints", "max-control-queue"} <= set(limits.limit_names())
    raised = limits.DEFAULT_LIMITS.raised(["max-request-init-containers=5000"])
    assert raised.max_request_init_containers == 5000
    assert limits.DEFAULT_LIMITS.max_request_init_containers == 1_000  # a value: the defaults stay


def test_the_control_queue_is_bounded_in_process_too(tmp_path):
    """With the node in this process, 8 requests waiting for the node's lock take every slot; the 9th is
    refused at once (and PodResources still answers)."""
    import threading

    with serving(tmp_path) as (server, c):
        slots = server.control.runner.slots
        answers: list = []
        with server.host.lock:  # as a long control request holds it
            waiting = [threading.Thread(target=lambda: answers.append(c.control.ListPods(ctl.ListPodsRequest())))
                       for _ in range(8)]
            for thread in waiting:
                thread.start()
            while slots.taken < 8:
                threading.Event().wait(0.01)
            with pytest.raises(grpc.RpcError) as err:
                c.control.ListPods(ctl.ListPodsRequest(), timeout=10)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert err.value.details().startswith("the control queue is full: 8 control requests are waiting")
            assert list(c.list().pod_resources) == []
        for thread in waiting:
            thread.join()
        assert len(answers) == 8
