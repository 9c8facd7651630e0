"""Error texts echo huge values cut (issue 18, item 7): a 20 KB pod name used to overflow gRPC's
trailer limit (`RESOURCE_EXHAUSTED Stream removed`) instead of reaching the client as the
INVALID_ARGUMENT it is."""
from __future__ import annotations

import json

import grpc
import pytest

from memorymanager.server.protos.control import control_pb2 as ctl
from memorymanager.server.protos.v1 import api_pb2 as v1
from memorymanager.server.status import MAX_STATUS_MESSAGE_BYTES, status_message
from tests.server.serving import pod, serving

BIG = "x" * 20_000


def manifest(name="a", container="a", meta=None, limits=None):
    doc = {"metadata": {"name": name, **(meta or {})},
           "spec": {"containers": [{"name": container, "resources": {"limits": limits or {}}}]}}
    return json.dumps(doc)


CASES = {
    "pod name": (manifest(name=BIG), 'pod.metadata.name: Invalid value: "xxx'),
    "non-ASCII pod name": (manifest(name="\u00e9" * 20_000), "pod.metadata.name: Invalid value:"),
    "container name": (manifest(container=BIG), "pod.spec.containers[0].name: Invalid value:"),
    "unknown key": (manifest(meta={BIG: 1}), "pod.metadata.xxx"),
    "resource name": (manifest(limits={BIG: "1"}), "pod.spec.containers[0].resources.limits.xxx"),
    "label value": (manifest(meta={"labels": {"a": BIG}}), 'pod.metadata.labels: Invalid value: "xxx'),
}


def test_huge_values_are_echoed_cut_with_the_status_they_deserve(tmp_path):
    with serving(tmp_path) as (_, c):
        for case, (text, start) in CASES.items():
            with pytest.raises(grpc.RpcError) as err:
                c.admit(text)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, case
            details = err.value.details()
            assert details.startswith(start) and "(20,000 characters)" in details, (case, details[:300])
            assert len(details.encode()) < 2_000, case
        with pytest.raises(grpc.RpcError) as err:
            c.control.Remove(ctl.RemoveRequest(pod=BIG), timeout=10)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND and "was admitted" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:
            c.control.Explain(ctl.ExplainRequest(pod=pod("a"), format=BIG), timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "unknown format" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:
            c.admit(pod("a"), hints=json.dumps({BIG: {"cpu": []}}))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as err:  # PodResources Get: kubelet's text, the name cut
            c.v1.Get(v1.GetPodResourcesRequest(pod_name="\u00e9" * 20_000, pod_namespace="default"), timeout=10)
        assert err.value.code() == grpc.StatusCode.UNKNOWN and "message cut" in err.value.details()
        assert c.admit(pod("ok")).admitted  # still serving


def test_a_status_message_always_fits_the_trailer():
    assert status_message("short") == "short"
    long = "\u00e9\ud800" * 50_000  # two bytes of UTF-8, then a lone surrogate (no UTF-8 at all)
    cut = status_message(long)
    assert len(cut.encode("utf-8")) <= MAX_STATUS_MESSAGE_BYTES and cut.endswith("bytes)")
    assert "\\ud800" in cut


# -- the property: a huge value anywhere in a request never breaks the status -----------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


SEED = {"metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"initContainers": [{"name": "init", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
                 "containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}


def _places(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _places(value, prefix + (key,))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _places(value, prefix + (i,))


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("echo")) as (_, c):
        yield c


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_huge_value_anywhere_gets_a_short_status(clients, data):
    import copy

    doc = copy.deepcopy(SEED)
    place = data.draw(st.sampled_from(list(_places(doc))[1:]))
    huge = data.draw(st.sampled_from(["x", "\u00e9", "\ud800", "9", "a-"])) * data.draw(st.integers(300, 30_000))
    as_key = data.draw(st.booleans())
    parent = doc
    for key in place[:-1]:
        parent = parent[key]
    if as_key and isinstance(parent, dict):
        parent[huge] = parent.pop(place[-1])
    else:
        parent[place[-1]] = huge
    try:
        if clients.admit(json.dumps(doc)).admitted:
            clients.control.Remove(ctl.RemoveRequest(pod=doc["metadata"]["name"]), timeout=10)
    except grpc.RpcError as err:  # over the wire: the status meant, never a trailer too large
        assert err.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION), err.details()
        assert len(err.details().encode("utf-8")) <= MAX_STATUS_MESSAGE_BYTES
