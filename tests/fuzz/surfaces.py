"""The surfaces added since the readers were fuzzed (issue 20): the Python API, the fleet spec and
trace, `explain --node` roots, and the resmgr calls and records.

Each surface is a reader (one generated case in, a result or one of the project's errors out) and
a strategy of `(case, must_refuse)`, as in readers.py. `must_refuse` marks the cases built to break
a rule the surface enforces: a wrong argument type or range at the API, a Python None where a value
is read, a trace time that would misorder events, a key written twice, what is not a checkpoint in
a node root, an output under the root being read, a container in the claims' key space.
"""
from __future__ import annotations

import copy
import json
import os
import shutil
import tempfile
from typing import Any, Callable

from hypothesis import strategies as st

from tests.fuzz.readers import HiddenException
from tests.fuzz.strategies import GUARANTEED, SEED_POD, mutated, nasty_values, nested

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
NODE_ROOT = os.path.join(REPO, "fixtures", "nodes", "two-nodes")
POD_FILE = os.path.join(REPO, "fixtures", "nodes", "pod-4gi.yaml")
STATIC = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def _cli(argv: list[str]) -> tuple[int, str]:
    """memorymanager in this process; a Python exception it printed as an error is a failure."""
    from tests.fuzz.corpus import run_cli
    from tests.fuzz.harness import _PYTHON_ERROR

    code, output = run_cli(argv)
    for line in output.splitlines():
        if line.startswith("memorymanager: error: ") and _PYTHON_ERROR.match(line[len("memorymanager: error: "):]):
            raise HiddenException(line)
        if "Traceback (most recent call last)" in line:
            raise HiddenException(output[-500:])
    return code, output


class Refused(Exception):
    """A command's clean refusal (exit 2 with one line), counted as `error`."""


def _refused(code: int, output: str) -> None:
    from tests.fuzz.readers import _Clean

    if code != 0:
        raise _Clean(output.strip().splitlines()[-1] if output.strip() else f"exit {code}")


# ----- the Python API ---------------------------------------------------------------------------------

_API_NODE = None


def _api_node() -> Any:
    global _API_NODE
    if _API_NODE is None:
        import memorymanager

        _API_NODE = memorymanager.Node(memorymanager.synthetic_machine(2, 8 << 30, hugepages_2mi=512), dict(STATIC))
        _API_NODE.start()
    return _API_NODE


def read_api(case: tuple[str, tuple, dict]) -> Any:
    """One public call of `memorymanager` with generated arguments."""
    import memorymanager

    call, args, kwargs = case
    if call == "synthetic_machine":
        return memorymanager.synthetic_machine(*args, **kwargs)
    if call == "Node":
        folder = tempfile.mkdtemp(prefix="fuzz-api-")
        try:
            kwargs = {k: (os.path.join(folder, v[len("TMP:"):]) if isinstance(v, str) and v.startswith("TMP:") else v)
                      for k, v in kwargs.items()}
            if kwargs.get("state_dir") == "FILE":
                kwargs["state_dir"] = os.path.join(folder, "a-file")
                open(kwargs["state_dir"], "w").close()
            node = memorymanager.Node(*args, **kwargs)
            node.start()
            return node.free()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    if call == "from_host":
        return memorymanager.Node.from_host(*args, **kwargs)
    node = _api_node()
    if call == "restart":
        try:
            node.restart(**kwargs)
            return node.kubelet
        finally:
            node.restart(**{k: v for k, v in STATIC.items()})
    if call == "admit":
        answer = node.admit(*args, **kwargs)
        if answer.admitted:
            node.remove(args[0] if not isinstance(args[0], dict) else answer_pod_name(args[0]))
        return answer
    if call == "admit_on":
        answer = node.admit_on(*args, **kwargs)
        if answer.admitted:
            node.remove(answer_pod_name(args[0]))
        return answer
    if call == "adopt":
        fresh = memorymanager.Node(memorymanager.synthetic_machine(2, 8 << 30), dict(STATIC))
        fresh.adopt(*args)
        return fresh.pods()
    return getattr(node, call)(*args, **kwargs)


def answer_pod_name(pod: Any) -> str:
    """The name an admitted pod manifest is removed by."""
    return pod["metadata"]["name"]


def _none_where_read(doc: Any) -> bool:
    """Whether a pod map has a Python None where the API reads a value (the oracle of that rule,
    written apart from the API's own walk)."""
    if not isinstance(doc, dict):
        return False
    def has_none(parent: Any, keys: tuple) -> bool:
        return isinstance(parent, dict) and any(k in parent and parent[k] is None for k in keys)

    def resources(res: Any) -> bool:
        if not isinstance(res, dict):
            return False
        if has_none(res, ("requests", "limits")):
            return True
        return any(isinstance(res.get(k), dict) and any(v is None for v in res[k].values()) for k in ("requests", "limits"))

    if has_none(doc, ("metadata", "spec")) or has_none(doc.get("metadata"), ("name", "uid", "namespace")):
        return True
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return False
    if has_none(spec, ("resources", "containers", "initContainers")) or resources(spec.get("resources")):
        return True
    for key in ("containers", "initContainers"):
        items = spec.get(key)
        if isinstance(items, list):
            for c in items:
                if c is None or (isinstance(c, dict) and (has_none(c, ("name", "resources")) or resources(c.get("resources")))):
                    return True
    return False


WRONG_FOR = {  # argument -> values of a type the argument never takes
    "state_dir": [5, 1.5, True, [], {}, nested(200), b"dir", ""],
    "merge": [None, 5, [], {}, "slow", "FAST"],
    "machine": [None, 5, 1.5, True, [], b"x", nested(200)],
    "kubelet": [5, 1.5, True, [], b"x", nested(200)],
    "pod": [None, 5, 1.5, True, [], b"x", nested(200)],
    "numa_nodes": [None, 5, "0", [0], nested(200), {"app": None}, {"app": []}, {"app": [64]}, {"app": [-1]},
                   {"app": range(10 ** 12)}, {"app": [True]}, {"nope": [0]}, {"app": [5]}],
    "pods": [None, 5, "pod", {"metadata": {}}, nested(200)],
    "container": [5, [], {}, nested(200)],
    "sysfs_root": [None, 5, [], "", "/no/such/folder"],
    "pod_uid": [None, 5, [], {}],
}
SYNTHETIC_WRONG = {"numa_nodes": [0, -1, 65, 10 ** 6, True, 1.5, "2", None],
                   "memory_per_node": [-5, 1 << 64, 1.5, "1Gi", None, True],
                   "hugepages_2mi": [-1, 1 << 64, 1.5, "1", None],
                   "hugepages_1gi": [-1, 1 << 64, 1.5, None],
                   "cores_per_node": [-1, 1 << 40, 1.5, None]}
GOOD_POD = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "app", "resources": {"limits": dict(GUARANTEED)}}]}}


@st.composite
def api_calls(draw: Any) -> tuple[tuple[str, tuple, dict], bool]:
    machine = {"num_cores": 4, "memory_capacity": 8 << 30, "topology": [
        {"node_id": i, "memory": 4 << 30, "hugepages": [], "distances": [10, 20]} for i in range(2)]}
    kind = draw(st.sampled_from(["Node", "Node", "synthetic", "pod", "pod", "pod", "hints", "remove", "restart",
                                 "adopt", "admit_on", "blocks", "from_host"]))
    if kind == "Node":
        arg = draw(st.sampled_from(["state_dir", "merge", "machine", "kubelet"]))
        kwargs: dict = {"state_dir": draw(st.sampled_from([None, "TMP:state", "TMP:a/b/c"])), "merge": "fast"}
        args = [machine, dict(STATIC)]
        if draw(st.booleans()):
            value = draw(st.sampled_from(WRONG_FOR[arg] + (["FILE"] if arg == "state_dir" else [])))
            if arg in ("machine", "kubelet"):
                args[0 if arg == "machine" else 1] = value
            else:
                kwargs[arg] = value
            return ("Node", tuple(args), kwargs), True
        index = draw(st.sampled_from([0, 1]))
        doc = draw(mutated(machine if index == 0 else dict(STATIC)))
        args[index] = doc
        none_field = index == 1 and isinstance(doc, dict) and any(v is None for v in doc.values())
        return ("Node", tuple(args), kwargs), none_field
    if kind == "synthetic":
        kwargs = {"hugepages_2mi": 0, "hugepages_1gi": 0, "cores_per_node": 8}
        args = [2, 1 << 30]
        arg = draw(st.sampled_from(sorted(SYNTHETIC_WRONG)))
        value = draw(st.sampled_from(SYNTHETIC_WRONG[arg]))
        if arg in ("numa_nodes", "memory_per_node"):
            args[0 if arg == "numa_nodes" else 1] = value
        else:
            kwargs[arg] = value
        return ("synthetic_machine", tuple(args), kwargs), True
    if kind == "pod":
        call = draw(st.sampled_from(["would_admit", "admit", "hints", "largest_admissible"]))
        if draw(st.booleans()):
            return (call, (draw(st.sampled_from(WRONG_FOR["pod"])),), {}), True
        doc = draw(mutated(SEED_POD))
        return (call, (doc,), {}), _none_where_read(doc)
    if kind == "hints":
        hints = draw(st.one_of(nasty_values(), mutated({"app": {"cpu": [{"numaAffinity": [0], "preferred": True}]}}),
                               st.just({"app": {"cpu": [(range(10 ** 12), True)]}}),
                               st.just({"cpu": [([0, 64], True)]})))
        return ("would_admit", (copy.deepcopy(GOOD_POD),), {"hints": hints}), False
    if kind == "remove":
        if draw(st.booleans()):
            return ("remove", ("web",), {"container": draw(st.sampled_from(WRONG_FOR["container"]))}), True
        return ("remove", (draw(nasty_values()),), {}), False
    if kind == "restart":
        field = draw(st.sampled_from(["topologyManagerPolicy", "memoryManagerPolicy", "topologyManagerScope",
                                      "reservedMemory", "featureGates", "nonsense"]))
        value = draw(nasty_values())
        return ("restart", (), {field: value}), value is None
    if kind == "adopt":
        if draw(st.booleans()):
            return ("adopt", (draw(st.sampled_from(WRONG_FOR["pods"])),), {}), True
        pods = draw(st.lists(mutated(SEED_POD), max_size=3))
        return ("adopt", (pods,), {}), any(_none_where_read(p) for p in pods)
    if kind == "admit_on":
        return ("admit_on", (copy.deepcopy(GOOD_POD), draw(st.sampled_from(WRONG_FOR["numa_nodes"]))), {}), True
    if kind == "blocks":
        call = draw(st.sampled_from(["memory_blocks", "pod_memory_blocks"]))
        value = draw(st.sampled_from(WRONG_FOR["pod_uid"]))
        args = (value, "app") if call == "memory_blocks" else (value,)
        return (call, args, {}), True
    return ("from_host", (), {"sysfs_root": draw(st.sampled_from(WRONG_FOR["sysfs_root"]))}), True


# ----- fleet: the fleet file and the trace ------------------------------------------------------------

SEED_FLEET = {"name": "fuzz", "nodes": [{"name": "a", "count": 2,
                                          "machine": {"numaNodes": 2, "memoryPerNode": "4Gi"},
                                          "kubelet": dict(STATIC)}],
              "trace": "t.jsonl", "templates": {"small": GOOD_POD}, "placement": "numa-aware", "onRefusal": "retry",
              "sweep": [{"name": "base"}, {"name": "restricted", "kubelet": {"topologyManagerPolicy": "restricted"}}]}
SEED_EVENTS = [{"time": 1, "add": GOOD_POD}, {"time": 2, "add": {"template": "small", "name": "w2"}},
               {"time": 3, "add": {"template": "small", "name": "w3"}, "nodeName": "a-1"},
               {"time": 4, "delete": "web"}]


def _fleet_folder(fleet_text: str, trace_text: str) -> tuple[str, str]:
    folder = tempfile.mkdtemp(prefix="fuzz-fleet-")
    with open(os.path.join(folder, "fleet.yaml"), "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(fleet_text)
    with open(os.path.join(folder, "t.jsonl"), "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(trace_text)
    return folder, os.path.join(folder, "fleet.yaml")


def read_fleet(case: tuple[str, str]) -> Any:
    """A fleet file and its trace: read, checked, then replayed when small (as `fleet` does)."""
    from memorymanager.fleet.simulate import run_nodes
    from memorymanager.fleet.spec import load_fleet
    from memorymanager.fleet.trace import load_trace

    fleet_text, trace_text = case
    folder, path = _fleet_folder(fleet_text, trace_text)
    try:
        spec = load_fleet(path)
        events = load_trace(spec.trace, spec.templates, spec.node_names())
        if len(spec.node_names()) <= 8 and len(events) <= 50:
            return [run_nodes(spec, v, events) for v in spec.variants]
        return events
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _dump(doc: Any) -> str:
    from tests.fuzz.strategies import _dump as dump

    return dump(doc)


@st.composite
def fleet_specs(draw: Any) -> tuple[tuple[str, str], bool]:
    trace = "\n".join(json.dumps(e) for e in SEED_EVENTS) + "\n"
    rule = draw(st.sampled_from(["mutate", "mutate", "mutate", "text", "count", "placement", "duplicate"]))
    doc = copy.deepcopy(SEED_FLEET)
    if rule == "count":
        doc["nodes"][0]["count"] = draw(st.sampled_from([0, -1, 100_001, "2", 1.5, None]))
        return (_dump(doc), trace), True
    if rule == "placement":
        doc["placement"] = draw(st.sampled_from(["best", "", None, 5, ["first-fit"]]))
        return (_dump(doc), trace), True
    if rule == "duplicate":
        text = _dump(doc).replace('"placement": "numa-aware"', '"placement": "numa-aware", "placement": "first-fit"')
        return (text, trace), True
    if rule == "text":
        return (draw(st.one_of(st.text(max_size=200), st.sampled_from([
            "nodes: &a [*a]\n", "- [[[[[[\n", "nodes: " + "[" * 3000 + "]" * 3000, "a: 1\na: 2\n"]))), trace), False
    return (_dump(draw(mutated(doc, 3))), trace), False


BAD_TIMES = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 5000, "9" * 300, "1e300", "9007199254740993"]


@st.composite
def fleet_traces(draw: Any) -> tuple[tuple[str, str], bool]:
    fleet = _dump(SEED_FLEET)
    lines = [json.dumps(e) for e in SEED_EVENTS]
    rule = draw(st.sampled_from(["mutate", "mutate", "time", "duplicate", "deep", "raw", "order"]))
    i = draw(st.integers(0, len(lines) - 1))
    if rule == "time":
        lines[i] = lines[i].replace(f'"time": {SEED_EVENTS[i]["time"]}', '"time": ' + draw(st.sampled_from(BAD_TIMES)), 1)
        return (fleet, "\n".join(lines) + "\n"), True
    if rule == "duplicate":
        lines[i] = lines[i].replace('{"time"', '{"time": 0, "time"', 1)
        return (fleet, "\n".join(lines) + "\n"), True
    if rule == "deep":
        depth = draw(st.sampled_from([101, 1000, 3000, 100_000]))
        lines[i] = '{"time": 1, "add": ' + "[" * depth + "]" * depth + "}"
        return (fleet, "\n".join(lines) + "\n"), True
    if rule == "raw":
        return (fleet, draw(st.text(max_size=300))), False
    if rule == "order":
        times = draw(st.lists(st.one_of(st.integers(-10, 10), st.floats(allow_nan=False, allow_infinity=False,
                                                                          min_value=-1e6, max_value=1e6)),
                              min_size=len(lines), max_size=len(lines)))
        events = copy.deepcopy(SEED_EVENTS)
        for e, t in zip(events, times):
            e["time"] = t
        return (fleet, "\n".join(json.dumps(e) for e in events) + "\n"), False
    event = draw(mutated(SEED_EVENTS[i], 3))
    lines[i] = _dump(event)
    return (fleet, "\n".join(lines) + "\n"), False


def read_trace_in_order(case: tuple[str, str]) -> Any:
    """A trace read, then checked to be in time order (ties in file order): a misordering is a
    wrongly accepted trace."""
    from memorymanager.fleet.spec import load_fleet
    from memorymanager.fleet.trace import load_trace

    fleet_text, trace_text = case
    folder, path = _fleet_folder(fleet_text, trace_text)
    try:
        spec = load_fleet(path)
        events = load_trace(spec.trace, spec.templates, spec.node_names())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    keys = [(e.time, e.line) for e in events]
    if keys != sorted(keys):
        raise HiddenException(f"events out of order: {keys}")
    return events


# ----- explain --node roots ---------------------------------------------------------------------------

STATE = os.path.join("var", "lib", "kubelet", "memory_manager_state")
CONFIG = os.path.join("var", "lib", "kubelet", "config.yaml")


def _plant(root: str, what: str, data: bytes) -> None:
    """Put `what` where the checkpoint is."""
    path = os.path.join(root, STATE)
    os.remove(path)
    if what == "bytes":
        with open(path, "wb") as fh:
            fh.write(data)
    elif what == "folder":
        os.mkdir(path)
    elif what == "fifo":
        os.mkfifo(path)
    elif what in ("/dev/zero", "/dev/urandom"):
        os.symlink(what, path)
    elif what == "loop":
        os.symlink(path + ".b", path)
        os.symlink(path, path + ".b")
    elif what == "dangling":
        os.symlink(path + ".nowhere", path)
    elif what == "entries":
        from pathlib import Path

        from tests.explain.helpers import node_root_with_entries

        shutil.rmtree(root)
        node_root_with_entries(Path(root), int(data.decode()))


def read_explain_root(case: tuple[str, bytes, bytes, str]) -> Any:
    """`memorymanager explain --node ROOT POD` on a copy of the fixture root with its checkpoint
    replaced (and maybe its configuration); `-o` inside or outside the root."""
    what, data, config, output = case
    folder = tempfile.mkdtemp(prefix="fuzz-root-")
    root = os.path.join(folder, "node")
    try:
        shutil.copytree(NODE_ROOT, root, symlinks=True)
        _plant(root, what, data)
        if config:
            with open(os.path.join(root, CONFIG), "wb") as fh:
                fh.write(config)
        argv = ["explain", "--node", root, POD_FILE, "--format", "json"]
        if output:
            argv += ["-o", os.path.join(root if output == "inside" else folder, "out.json")]
        code, text = _cli(argv)
        if output == "inside" and os.path.exists(os.path.join(root, "out.json")):
            raise HiddenException("wrote under the root being read")
        _refused(code, text)
        return text
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@st.composite
def explain_roots(draw: Any) -> tuple[tuple[str, bytes, bytes, str], bool]:
    from tests.fuzz.strategies import checkpoint_bytes

    output = draw(st.sampled_from(["", "", "", "outside", "inside"]))
    what = draw(st.sampled_from(["bytes", "bytes", "bytes", "folder", "fifo", "/dev/zero", "/dev/urandom", "loop",
                                 "dangling", "entries"]))
    data = b""
    if what == "bytes":
        data = draw(st.one_of(checkpoint_bytes(), st.binary(max_size=200)))
    elif what == "entries":
        data = str(draw(st.sampled_from([0, 1, 50, 500]))).encode()
    config = b""
    if draw(st.integers(0, 4)) == 0:
        seed = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **STATIC}
        config = _dump(draw(mutated(seed))).encode("utf-8", "surrogatepass")
    refused = what in ("folder", "fifo", "/dev/zero", "/dev/urandom", "loop") or output == "inside"
    return (what, data, config, output), refused


# ----- resmgr: calls and records ----------------------------------------------------------------------

def _policy(directory: Any = None) -> Any:
    import memorymanager
    from memorymanager import resmgr as r
    from tests.resmgr.helpers import FakeOwner

    policy = r.new_policy(r.KubeletBackend(), r.ContainerCache(directory), r.Options(FakeOwner()),
                          memorymanager.synthetic_machine(2, 8 << 30))
    policy.start(dict(STATIC))
    return policy


def read_resmgr_call(case: tuple[str, list]) -> Any:
    """One resmgr call (or value construction) with generated arguments, on a fresh policy."""
    from memorymanager import resmgr as r

    call, args = case
    if call in ("ResourceClaim", "ClaimConfig", "DeviceRequestAllocationResult", "Container", "ContainerCache", "Device"):
        return getattr(r, call)(*args)
    policy = _policy()
    if call.startswith("cache."):
        return getattr(policy.cache, call[len("cache."):])(*args)
    return getattr(policy, call)(*args)


RESMGR_NASTY = [None, 5, -1, 1.5, True, "", "x" * 300, "memory-numa" + "9" * 300, {}, {"a": 1}, [], [1], ("a",),
                nested(150), b"bytes"]


@st.composite
def resmgr_calls(draw: Any) -> tuple[tuple[str, list], bool]:
    from kubeinputs.quantity import Quantity
    from memorymanager import resmgr as r

    size = {"size": Quantity.from_int(1 << 30)}
    good = {
        "allocate_claim": [r.ResourceClaim("c1", "n", "default"),
                           [r.DeviceRequestAllocationResult("mem", r.DEFAULT_DRIVER, "pool0", "memory-numa0", size)]],
        "release_claim": ["c1"],
        "allocate_resources": [r.Container("p-app", copy.deepcopy(GOOD_POD), "app")],
        "release_resources": [r.Container("p-app", copy.deepcopy(GOOD_POD), "app")],
        "update_resources": [r.Container("p-app", copy.deepcopy(GOOD_POD), "app")],
        "container_started": [r.Container("p-app", copy.deepcopy(GOOD_POD), "app")],
        "export_resource_data": [r.Container("p-app", copy.deepcopy(GOOD_POD), "app")],
        "sync": [[], []],
        "cache.insert": [r.Container("p-app", copy.deepcopy(GOOD_POD), "app")],
        "cache.lookup": ["p-app"],
        "cache.delete": ["p-app"],
        "cache.container_directory": ["p-app"],
        "ResourceClaim": ["c1", "n", "default", ()],
        "ClaimConfig": [r.DEFAULT_DRIVER, {}, ()],
        "DeviceRequestAllocationResult": ["mem", r.DEFAULT_DRIVER, "pool0", "memory-numa0", size],
        "Container": ["p-app", copy.deepcopy(GOOD_POD), "app", (), "", False],
        "ContainerCache": [None],
        "Device": ["memory-numa0", {}, {}],
    }
    call = draw(st.sampled_from(sorted(good)))
    args = list(good[call])
    if call == "cache.container_directory":
        value = draw(st.one_of(st.sampled_from(RESMGR_NASTY + ["../../x", "a/b", ".."]), st.text(max_size=20)))
        return (call, [value]), not _is_container_id(value)
    i = draw(st.integers(0, len(args) - 1))
    value = draw(st.one_of(st.sampled_from(RESMGR_NASTY), st.text(max_size=20), st.integers(),
                           st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.none(), max_size=2)))
    ok = _takes(call, i, value)
    args[i] = value
    return (call, args), not ok


def _is_container_id(value: Any) -> bool:
    """The oracle of a container ID: ASCII letters and digits, then also '.', '_', '-'; 1 to 253."""
    import string

    first, rest = string.ascii_letters + string.digits, string.ascii_letters + string.digits + "._-"
    return (isinstance(value, str) and 1 <= len(value) <= 253 and value[0] in first
            and all(ch in rest for ch in value))


def _takes(call: str, i: int, value: Any) -> bool:
    """Whether argument `i` of `call` accepts `value` (the oracle of the type checks)."""
    is_str = isinstance(value, str)
    if call in ("ResourceClaim",):
        return is_str and (i != 0 or value != "") if i < 3 else isinstance(value, (list, tuple)) and not value
    if call == "ClaimConfig":
        return is_str if i == 0 else (isinstance(value, dict) and all(isinstance(k, str) for k in value)) if i == 1 \
            else isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    if call == "DeviceRequestAllocationResult":
        return is_str if i < 4 else isinstance(value, dict)
    if call == "Device":
        return (is_str and value != "") if i == 0 else isinstance(value, dict)
    if call == "Container":
        return False if i in (0, 1, 2) else (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)) \
            if i == 3 else is_str if i == 4 else isinstance(value, bool)
    if call == "ContainerCache":
        return value is None or (is_str and value != "")
    if call == "sync":
        return isinstance(value, (list, tuple)) and not value
    if call in ("release_claim", "cache.lookup", "cache.delete"):
        return is_str
    if call == "allocate_claim" and i == 1:
        return False  # not a list of results: refused; an empty list: an allocation without results, refused too
    return False


def read_resmgr_records(case: tuple[bytes, bytes]) -> Any:
    """A policy started on a folder holding a generated container cache and claim records."""
    claims, cache = case
    folder = tempfile.mkdtemp(prefix="fuzz-resmgr-")
    try:
        os.makedirs(os.path.join(folder, "kubelet"))
        if claims:
            with open(os.path.join(folder, "kubelet", "claims.json"), "wb") as fh:
                fh.write(claims)
        if cache:
            with open(os.path.join(folder, "cache"), "wb") as fh:
                fh.write(cache)
        policy = _policy(folder)
        return [c.id for c in policy.cache], policy.backend.claim_records()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


SEED_RECORDS = {"version": 1, "claims": {"c1": {"uid": "c1", "name": "n1", "namespace": "default", "allocations": [
    {"request": "mem", "device": "memory-numa1", "numaNode": 1, "resource": "memory", "size": 1 << 30}],
    "edits": [{"env": ["CLAIMED_MEMS=1"]}]}}}
SEED_CACHE = {"version": "1", "containers": [{"id": "p-app", "pod": GOOD_POD, "name": "app", "claims": ["c1"],
                                              "memset": "0", "started": True}]}


@st.composite
def resmgr_records(draw: Any) -> tuple[tuple[bytes, bytes], bool]:
    rule = draw(st.sampled_from(["mutate", "mutate", "mutate", "raw", "key-space", "duplicate", "many"]))
    claims, cache = SEED_RECORDS, SEED_CACHE
    encode = lambda d: _dump(d).encode("utf-8", "surrogatepass")  # noqa: E731
    if rule == "raw":
        return (draw(st.binary(max_size=200)), draw(st.binary(max_size=200))), False
    if rule == "key-space":
        doc = copy.deepcopy(SEED_CACHE)
        doc["containers"][0]["pod"]["metadata"]["uid"] = "dra-claim-c1"
        return (encode(claims), encode(doc)), True
    if rule == "duplicate":
        return (encode(claims).replace(b'{"version": 1', b'{"version": 1, "version": 1', 1), encode(cache)), True
    if rule == "many":
        n = draw(st.sampled_from([10, 200]))
        many = {"version": 1, "claims": {f"c{i}": {"uid": f"c{i}", "name": f"n{i}", "namespace": "default",
                                                      "allocations": [{"request": "mem", "device": f"memory-numa{i % 2}",
                                                                       "numaNode": i % 2, "resource": "memory",
                                                                       "size": 1 << 20}],
                                                      "edits": [{"env": [f"CLAIMED_MEMS={i % 2}"]}]} for i in range(n)}}
        return (encode(many), b""), False
    if draw(st.booleans()):
        return (encode(draw(mutated(claims, 3))), encode(cache)), False
    return (encode(claims), encode(draw(mutated(cache, 3)))), False


def surfaces() -> dict[str, tuple[Callable[[Any], Any], Any]]:
    """name -> (reader, strategy) of the surfaces of issue 20."""
    return {
        "api": (read_api, api_calls()),
        "fleet-spec": (read_fleet, fleet_specs()),
        "fleet-trace": (read_trace_in_order, fleet_traces()),
        "explain-node": (read_explain_root, explain_roots()),
        "resmgr-calls": (read_resmgr_call, resmgr_calls()),
        "resmgr-records": (read_resmgr_records, resmgr_records()),
    }
