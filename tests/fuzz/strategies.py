"""Hypothesis strategies of bad and odd inputs for every reader.

Each strategy yields `(value, must_refuse)`: a valid seed document with a few of its values replaced
by nasty ones (numbers of any length, lone surrogates, non-ASCII digits, deep nesting, wrong types,
missing or unknown keys), or raw bytes; `must_refuse` is True when the change breaks a rule the API
server or kubelet enforces (a result for it is "wrongly accepted").
"""
from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

GUARANTEED = {"cpu": "1", "memory": "1Gi"}
SEED_POD = {"metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
            "spec": {"initContainers": [{"name": "init", "resources": {"limits": dict(GUARANTEED)}}],
                     "containers": [{"name": "app", "image": "nginx",
                                     "resources": {"limits": {**GUARANTEED, "hugepages-2Mi": "4Mi"}}}]}}
SEED_MACHINE = {"num_cores": 4, "memory_capacity": 8 << 30, "topology": [
    {"node_id": i, "memory": 4 << 30, "hugepages": [{"page_size": 2048, "num_pages": 512}],
     "cores": [{"core_id": 0, "thread_ids": [2 * i, 2 * i + 1], "socket_id": 0}], "distances": [10, 20]}
    for i in range(2)]}
SEED_KUBELET = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
                "topologyManagerScope": "container",
                "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
                "featureGates": {"PodLevelResources": True}}
SEED_CHECKPOINT = (
    '{"policyName":"Static","machineState":{"0":{"numberOfAssignments":1,"memoryMap":{"memory":{"total":2147483648,'
    '"systemReserved":104857600,"allocatable":2042626048,"reserved":1073741824,"free":968884224}},"cells":[0]}},'
    '"entries":{"pod-a":{"app":[{"numaAffinity":[0],"type":"memory","size":1073741824}]}},"checksum":0}')

NASTY_STRINGS = [
    "1" + "0" * 5000, "9" * 30, "-1", "0x10", "1e999999999", "1Gi ", " 1Gi", "\ud800", "\udfff", "\u00b2", "\u0663",
    "", " ", "a" * 300, "A", "a/b", "a b", "a\nb", "\x00", "\u202e", "NaN", "Infinity", "null", "true", "1.5",
    "hugepages-3Mi", "example.com/gpu", "foo/bar/baz", "-", "a" * 64, "\U0001F600", "\\", '"',
]
NASTY_NUMBERS = [0, -1, 1 << 63, (1 << 64) - 1, 1 << 64, 10 ** 30, -(10 ** 30), 2 ** 31, 1.5, float("inf"),
                 float("-inf"), float("nan"), 1e308, -0.0]


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def nasty_values() -> st.SearchStrategy:
    return st.one_of(
        st.sampled_from(NASTY_STRINGS), st.sampled_from(NASTY_NUMBERS), st.integers(), st.text(max_size=40),
        st.floats(), st.booleans(), st.none(), st.builds(nested, st.sampled_from([1, 50, 99, 101, 200])),
        st.just({}), st.just([]), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
        st.builds(lambda n: 10 ** n, st.integers(min_value=15, max_value=6000)),
    )


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """The paths (tuples of keys / indexes) inside a document, down to 12 levels."""
    out = [prefix]
    if len(prefix) >= 12:
        return out
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:20]):
            out.extend(_paths(v, prefix + (i,)))
    return out


@st.composite
def mutated(draw: Any, seed: Any, max_changes: int = 3) -> Any:
    """The seed with up to `max_changes` values replaced, keys dropped or keys added."""
    doc = copy.deepcopy(seed)  # seeds are shallow; nasty values are placed, never copied
    for _ in range(draw(st.integers(min_value=1, max_value=max_changes))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(["replace", "replace", "replace", "drop", "add"]))
        if not path:
            if kind == "replace":
                doc = draw(nasty_values())
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if kind == "replace":
            parent[path[-1]] = draw(nasty_values())
        elif kind == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif kind == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(NASTY_STRINGS + ["name", "memory", "extra"]))] = draw(nasty_values())
    return doc


# -- documents with a rule broken on purpose (must be refused) --------------------------------------------
BAD_CONTAINER_NAMES = ["App", "a/b", "a b", "a\nb", "a" * 64, "-a", "a-", "\ud800", "\u00e9", "a.b", "a_b", ""]
BAD_RESOURCE_NAMES = ["gpu", "foo/bar/baz", "example.com/-x", "/x", "a" * 64, "example.com/", "pods", "Memory"]


@st.composite
def refused_pods(draw: Any) -> Any:
    doc = copy.deepcopy(SEED_POD)
    app = doc["spec"]["containers"][0]
    rule = draw(st.sampled_from(["name", "resource", "hugepage-multiple", "hugepage-alone", "image", "label",
                                 "pod-level-below", "pod-level-negative"]))
    if rule == "name":
        app["name"] = draw(st.sampled_from(BAD_CONTAINER_NAMES))
    elif rule == "resource":
        app["resources"]["limits"][draw(st.sampled_from(BAD_RESOURCE_NAMES))] = "1"
    elif rule == "hugepage-multiple":
        app["resources"]["limits"]["hugepages-2Mi"] = draw(st.sampled_from(["1Mi", "3Mi", "2.5Mi", "1"]))
    elif rule == "hugepage-alone":
        app["resources"] = {"limits": {"hugepages-2Mi": "2Mi"}}
    elif rule == "label":
        doc["metadata"]["labels"]["app"] = draw(st.sampled_from([True, 0, 1 << 70, 1.5, None, [], ["a"], {"a": "b"},
                                                                  "a b", "x" * 64, "-x"]))
    elif rule == "pod-level-below":  # pod limits below the containers' (1Gi each)
        doc["spec"]["resources"] = {"limits": {"cpu": "2", "memory": draw(st.sampled_from(["512Mi", "1", "0"]))}}
    elif rule == "pod-level-negative":
        doc["spec"]["resources"] = {"limits": {draw(st.sampled_from(["cpu", "memory"])): "-1Gi"}}
    else:
        app["image"] = draw(st.sampled_from([True, 1, [], {}]))
    return doc


def pods() -> st.SearchStrategy:
    return st.one_of(st.tuples(mutated(SEED_POD), st.just(False)), st.tuples(refused_pods(), st.just(True)))


def _dump(doc: Any) -> str:
    """JSON text of a generated document, integers of any length written out (the readers must cope)."""
    import sys

    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return json.dumps(doc, allow_nan=True)
    finally:
        sys.set_int_max_str_digits(previous)


def pod_texts() -> st.SearchStrategy:
    yaml_like = st.sampled_from([
        "metadata: {name: a}\nspec: {containers: [{name: app}]}\n",
        "a: &a [x, x]\nb: [*a, *a]\n", "metadata: {name: a, name: b}\nspec: {}\n", "- [[[[[[\n", "key: !!python/object x",
        "metadata: {name: a}\nspec: {containers: [{name: app, resources: {limits: {memory: " + "9" * 5000 + "}}}]}\n",
    ])
    return st.tuples(st.one_of(mutated(SEED_POD).map(_dump), yaml_like, st.text(max_size=200)), st.just(False))


@st.composite
def refused_machines(draw: Any) -> Any:
    doc = copy.deepcopy(SEED_MACHINE)
    rule = draw(st.sampled_from(["no-memory", "same-id", "negative"]))
    if rule == "no-memory":
        del doc["topology"][0]["memory"]
    elif rule == "same-id":
        doc["topology"][1]["node_id"] = 0
    else:
        doc["topology"][0]["memory"] = -1
    return doc


def machines() -> st.SearchStrategy:
    return st.one_of(st.tuples(mutated(SEED_MACHINE), st.just(False)), st.tuples(refused_machines(), st.just(True)))


def kubelet_configs() -> st.SearchStrategy:
    return st.tuples(mutated(SEED_KUBELET), st.just(False))


_NUMBERS_IN_CHECKPOINT = ["2147483648", "104857600", "1073741824", "[0]", '"memory"', '"Static"', "0}"]


@st.composite
def checkpoint_bytes(draw: Any) -> bytes:
    text = SEED_CHECKPOINT
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        target = draw(st.sampled_from(_NUMBERS_IN_CHECKPOINT))
        replacement = draw(st.one_of(st.sampled_from(["null", "1" + "0" * 5000, "-1", "1e3", "[]", "{}", '"\\ud800"',
                                                      "18446744073709551616", '"\u00b2"', "[" * 300 + "]" * 300]),
                                     st.text(max_size=8)))
        text = text.replace(target, replacement, 1)
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        cut = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:cut] + draw(st.binary(max_size=8)) + data[cut:]
    return data


def checkpoints() -> st.SearchStrategy:
    return st.tuples(st.one_of(checkpoint_bytes(), st.binary(max_size=300)), st.just(False))


NODE = "devices/system/node/"
SYSFS_SEED = {
    NODE + "node0/meminfo": b"Node 0 MemTotal:       8388608 kB\n",
    NODE + "node0/distance": b"10 20\n",
    NODE + "node0/hugepages/hugepages-2048kB/nr_hugepages": b"512\n",
    NODE + "node0/cpu0/topology/core_id": b"0\n",
    NODE + "node0/cpu0/topology/physical_package_id": b"0\n",
    NODE + "node1/meminfo": b"Node 1 MemTotal:       8388608 kB\n",
    NODE + "node1/distance": b"20 10\n",
    NODE + "node1/cpu1/topology/core_id": b"0\n",
    NODE + "node1/cpu1/topology/physical_package_id": b"0\n",
}
SYSFS_VALUES = [b"", b"\n", b"\xc2\xb2\n", "\u0663\n".encode(), b"-1\n", b"9" * 5000 + b"\n", b"18446744073709551616\n",
                b"0x10\n", b"1 2 3\n", b"\xff\xfe\n", b"Node 0 MemTotal: 99999999999999999999999 kB\n", b"10  20\n",
                b"Node 0 MemTotal: \xd9\xa3 kB\n", b"abc"]
SYSFS_NAMES = ["node\u0663", "node99999999999999999999", "cpu\u00b2", "hugepages-xkB", "node-1"]


@st.composite
def sysfs_trees(draw: Any) -> tuple[dict, bool]:
    tree = dict(SYSFS_SEED)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if draw(st.booleans()):
            key = draw(st.sampled_from(sorted(tree)))
            tree[key] = draw(st.one_of(st.sampled_from(SYSFS_VALUES), st.binary(max_size=20)))
        else:
            name = draw(st.sampled_from(SYSFS_NAMES))
            rel = NODE + (name + "/meminfo" if name.startswith("node") else "node0/" + name + "/topology/core_id")
            if name.startswith("hugepages"):
                rel = NODE + "node0/hugepages/" + name + "/nr_hugepages"
            tree[rel] = draw(st.sampled_from(SYSFS_VALUES))
    return tree, False


def scenario_files() -> st.SearchStrategy:
    seed = {"name": "fuzz", "machine": SEED_MACHINE, "kubelet": SEED_KUBELET,
            "steps": [{"admit": SEED_POD}, {"remove": {"pod": "web"}}, {"restart": {}}, {"check": {}}]}
    as_json = mutated(seed, 4).map(lambda d: (_dump(d).encode("utf-8", "surrogatepass"), ".json"))
    raw = st.tuples(st.binary(max_size=200), st.sampled_from([".json", ".yaml"]))
    return st.tuples(st.one_of(as_json, as_json, raw), st.just(False))


def grpc_requests() -> st.SearchStrategy:
    from memorymanager.server.protos.control import control_pb2 as pb

    def admit(doc: Any, hints: str) -> bytes:
        text = _dump(doc) if not isinstance(doc, str) else doc
        text = text.encode("utf-8", "replace").decode("utf-8")  # a protobuf string is UTF-8 (raw bytes below)
        return pb.AdmitRequest(pod=text, hints=hints).SerializeToString()

    hints = st.sampled_from(["", "{}", "[", "{containers: {app: {memory: [{numaAffinity: [0], preferred: true}]}}}",
                             '{"a": ' + "[" * 500 + "]" * 500 + "}", "1" * 5000])
    messages = st.one_of(
        st.tuples(st.sampled_from(["Admit", "WouldAdmit", "Hints"]),
                  st.builds(admit, st.one_of(mutated(SEED_POD), st.text(max_size=50)), hints)),
        st.tuples(st.sampled_from(["Admit", "Remove", "Hints"]), st.binary(max_size=100)),
        st.tuples(st.just("Remove"), st.builds(lambda p, c: pb.RemoveRequest(pod=p, container=c).SerializeToString(),
                                                st.sampled_from(["web", "unknown", "", "\n", "a" * 1000]),
                                                st.sampled_from(["", "app", "x"]))),
    )
    return st.tuples(messages, st.just(False))
