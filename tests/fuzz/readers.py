"""The readers under fuzz: each takes one generated value and reads it the way the project does.

Every reader runs with the project's default limits. `READERS` maps a name to (reader, strategy).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Callable

from tests.fuzz.harness import temp_file, step_failure


class HiddenException(Exception):
    """A Python exception that the runner caught and reported as a step's error text."""


def read_scenario(case: tuple[bytes, str]) -> Any:
    """A scenario file (bytes, suffix) through load_scenario and run_scenario."""
    from memorymanager.runner.execute import run_scenario
    from memorymanager.runner.scenario import load_scenario

    data, suffix = case
    path = temp_file(data, suffix)
    try:
        result = run_scenario(load_scenario(path))
    finally:
        os.remove(path)
    hidden = step_failure(result)
    if hidden:
        raise HiddenException(hidden)
    return result


def read_pod(doc: Any) -> Any:
    """A decoded v1 Pod manifest."""
    from kubeinputs.pod import parse_pod

    return parse_pod(doc)


def read_pod_text(text: str) -> Any:
    """A Pod manifest as text (YAML or JSON) through the one reader."""
    from kubeinputs.pod import parse_pod
    from kubeinputs.reader import load_text

    return parse_pod(load_text(text, json_format=text.lstrip().startswith("{")))


def read_machine(doc: Any) -> Any:
    """A decoded cadvisor MachineInfo document."""
    from kubeinputs.machine import parse_machine_info

    return parse_machine_info(doc)


def read_kubelet(doc: Any) -> Any:
    """A decoded KubeletConfiguration (fields or document), then kubelet's validation."""
    from kubeinputs.kubelet_config import parse_kubelet_config, validate_kubelet_configuration

    cfg = parse_kubelet_config(doc)
    validate_kubelet_configuration(cfg)
    return cfg


def read_checkpoint(blob: bytes) -> Any:
    """memory_manager_state bytes through kubelet's loader and the restore checks."""
    from state.checkpoint import read_checkpoint as load
    from state.state_checkpoint import check_loadable

    loaded = load(blob)
    check_loadable(loaded, None, "memory_manager_state")
    return loaded


def read_sysfs(tree: dict[str, bytes]) -> Any:
    """A sysfs tree ({relative path: content}) through the cadvisor-like reader."""
    from kubeinputs.sysfs import read_machine_info

    root = tempfile.mkdtemp(prefix="fuzz-sysfs-")
    try:
        for rel, content in tree.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(content)
        return read_machine_info(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


_HOST = None


class _Context:
    """A grpc.ServicerContext stand-in: abort raises, as grpc's does."""

    class Aborted(Exception):
        def __init__(self, code: Any, details: str) -> None:
            super().__init__(f"{code.name}: {details}")
            self.code, self.details = code, details

    def abort(self, code: Any, details: str) -> None:
        raise self.Aborted(code, details)


def _host() -> Any:
    global _HOST
    if _HOST is None:
        import memorymanager
        from memorymanager.server.host import NodeHost

        node = memorymanager.Node(memorymanager.synthetic_machine(2, 16 << 30, hugepages_2mi=1024),
                                  {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
                                   "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
        _HOST = NodeHost(node)
    return _HOST


def read_grpc(case: tuple[str, bytes]) -> Any:
    """A serialized node-control request (method, bytes): decoded as the server decodes it, then
    served. A gRPC status from the service (abort) is its clean refusal; INTERNAL would be a bug."""
    import grpc
    from google.protobuf.message import DecodeError

    from memorymanager.server.control import NodeControl
    from memorymanager.server.protos.control import control_pb2 as pb

    method, data = case
    request_type = {"Admit": pb.AdmitRequest, "WouldAdmit": pb.AdmitRequest, "Remove": pb.RemoveRequest,
                    "Hints": pb.HintsRequest}[method]
    try:
        request = request_type.FromString(data)
    except DecodeError as exc:
        raise _Clean(f"INVALID_ARGUMENT: cannot decode {request_type.__name__}: {exc}") from None
    service = NodeControl(_host())
    try:
        answer = getattr(service, method)(request, _Context())
    except _Context.Aborted as exc:
        if exc.code == grpc.StatusCode.INTERNAL:
            raise HiddenException(exc.details) from None
        raise _Clean(str(exc)) from None
    if method == "Admit" and getattr(answer, "admitted", False):
        service.Remove(pb.RemoveRequest(pod=request.pod and _admitted_name(request.pod)), _Context())
    return answer


def _admitted_name(text: str) -> str:
    from kubeinputs.reader import load_text

    try:
        doc = load_text(text, json_format=text.lstrip().startswith("{"))
        return doc["metadata"].get("uid") or doc["metadata"]["name"]
    except Exception:  # noqa: BLE001 - only to tidy up after an admitted pod
        return "-"


from kubeinputs.errors import InputError as _InputError  # noqa: E402


class _Clean(_InputError):
    """A clean refusal by the server, counted as `error`."""

    def __init__(self, text: str) -> None:
        super().__init__("request", text)


def readers() -> dict[str, tuple[Callable[[Any], Any], Any]]:
    """name -> (reader, hypothesis strategy)."""
    from tests.fuzz import strategies as st
    from tests.fuzz.cpu_devices import cpu_devices
    from tests.fuzz.surfaces import surfaces

    return {
        "scenario": (read_scenario, st.scenario_files()),
        "pod": (read_pod, st.pods()),
        "pod-text": (read_pod_text, st.pod_texts()),
        "machine": (read_machine, st.machines()),
        "sysfs": (read_sysfs, st.sysfs_trees()),
        "kubelet": (read_kubelet, st.kubelet_configs()),
        "checkpoint": (read_checkpoint, st.checkpoints()),
        "grpc": (read_grpc, st.grpc_requests()),
        **surfaces(),
        **cpu_devices(),
    }
