"""Table tests of the seed's constants, the resources.sh format, the extended-resource
reconciliation rules and the Policy's locking rule."""
from __future__ import annotations

import os
import stat
import subprocess

import pytest

from kubeinputs.quantity import parse_quantity
from memorymanager import resmgr as r
from memorymanager.resmgr.types import ContainerEdits, ExtendedResources

from tests.resmgr.helpers import MACHINE, STATIC, FakeOwner, claim, container


@pytest.mark.parametrize("name, value", [
    ("ExportedResources", "resources.sh"), ("SHARED_CPUS", "SHARED_CPUS"), ("ISOLATED_CPUS", "ISOLATED_CPUS"),
    ("EXCLUSIVE_CPUS", "EXCLUSIVE_CPUS"), ("CLAIMED_CPUS", "CLAIMED_CPUS"), ("MEMS", "MEMS"),
    ("CLAIMED_MEMS", "CLAIMED_MEMS"), ("MEMORY_RESOURCE", "memory"), ("CPU_RESOURCE", "cpu"),
    ("MEMSET_ATTRIBUTE", "memory set"), ("CPUS_ATTRIBUTE", "cpuset"), ("SHARED_CPUS_ATTRIBUTE", "shared cpuset"),
    ("RESERVED_CPUS_ATTRIBUTE", "reserved cpuset"), ("ISOLATED_CPUS_ATTRIBUTE", "isolated cpuset"),
    ("EXCESS_CPUS_ATTRIBUTE", "excess cpus"), ("COMPONENT_CPUS_ATTRIBUTE", "component cpusets"),
    ("CONTAINER_ALLOCATION_ZONE_TYPE", "allocation for container"),
])
def test_seed_constants(name: str, value: str) -> None:
    assert getattr(r, name) == value


def test_domains_and_no_claims_error() -> None:
    assert [d.value for d in r.Domain] == ["CPU", "Memory", "HugePages", "Cache", "MBW"]
    assert str(r.ErrNoDRAClaims) == "policy does not support DRA claims"
    assert isinstance(r.ErrNoDRAClaims, r.PolicyError)


# ----- resources.sh -----

@pytest.mark.parametrize("data, text", [
    ({}, ""),
    ({"MEMS": "0"}, 'MEMS="0"\n'),
    ({"MEMS": "0-1", "CLAIMED_MEMS": "1"}, 'CLAIMED_MEMS="1"\nMEMS="0-1"\n'),  # sorted by name
    ({"X": 'a"b'}, 'X="a\\"b"\n'),
    ({"X": "$(rm -rf /)`id`"}, 'X="\\$(rm -rf /)\\`id\\`"\n'),
    ({"X": "back\\slash"}, 'X="back\\\\slash"\n'),
    ({"X": "it's"}, 'X="it\'s"\n'),
])
def test_format_exports(data: dict, text: str) -> None:
    assert r.format_exports(data) == text


@pytest.mark.parametrize("data, message", [
    ({"1X": "a"}, "not a shell variable name"),
    ({"A-B": "a"}, "not a shell variable name"),
    ({"A B": "a"}, "not a shell variable name"),
    ({"A": 1}, "value must be a string"),
])
def test_format_exports_refuses(data: dict, message: str) -> None:
    with pytest.raises(r.PolicyError, match=message):
        r.format_exports(data)


def test_resources_sh_is_sourced_as_written(tmp_path) -> None:
    values = {"MEMS": "0,2", "TRICKY": 'a "quoted" $HOME `x` \\ it\'s'}
    path = r.write_exports(str(tmp_path), values)
    assert os.path.basename(path) == "resources.sh"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []  # no temp file left behind
    out = subprocess.run(["sh", "-c", f'. "{path}"; printf "%s|%s" "$MEMS" "$TRICKY"'],
                         capture_output=True, text=True, check=True).stdout
    assert out == f"{values['MEMS']}|{values['TRICKY']}"


# ----- extended resources -----

Q = parse_quantity


@pytest.mark.parametrize("current, managed, expected", [
    # None or an empty map owns and publishes nothing
    ({"a/x": "1"}, None, {"a/x": "1"}),
    ({"a/x": "1"}, {}, {"a/x": "1"}),
    # a value publishes ...
    ({}, {"a/x": "2"}, {"a/x": "2"}),
    # ... or replaces
    ({"a/x": "1"}, {"a/x": "2"}, {"a/x": "2"}),
    # None on a plain name removes it when present, and is fine when absent
    ({"a/x": "1", "b/y": "1"}, {"a/x": None}, {"b/y": "1"}),
    ({"b/y": "1"}, {"a/x": None}, {"b/y": "1"}),
    # a '*' pattern removes every matching resource not published
    ({"a/x": "1", "a/y": "1", "b/y": "1"}, {"a/*": None}, {"b/y": "1"}),
    ({"a/x": "1", "a/y": "1"}, {"a/*": None, "a/y": "3"}, {"a/y": "3"}),
    ({"a/x-1": "1", "a/x-2": "1", "a/z": "1"}, {"a/x-*": None}, {"a/z": "1"}),
    # the rest of the Node is left alone
    ({"c/z": "5"}, {"a/*": None, "a/new": "1"}, {"c/z": "5", "a/new": "1"}),
])
def test_reconcile_extended_resources(current: dict, managed: dict, expected: dict) -> None:
    cur = {k: Q(v) for k, v in current.items()}
    man: ExtendedResources = None if managed is None else {k: (None if v is None else Q(v)) for k, v in managed.items()}
    before = dict(cur)
    got = r.reconcile_extended_resources(cur, man)
    assert {k: str(v) for k, v in got.items()} == {k: str(Q(v)) for k, v in expected.items()}
    assert cur == before  # pure


def test_reconcile_refuses_a_published_pattern() -> None:
    with pytest.raises(r.PolicyError, match="pattern only marks ownership"):
        r.reconcile_extended_resources({}, {"a/*": Q("1")})


# ----- the locking rule -----

class RecordingBackend:
    """A backend recording, per call, whether the owner's lock was held."""

    def __init__(self, owner: FakeOwner) -> None:
        self.owner = owner
        self.calls: dict[str, bool] = {}

    def _note(self, name: str) -> None:
        self.calls[name] = self.owner.held

    def name(self) -> str: return "recording"
    def description(self) -> str: return "records lock use"
    def setup(self, options: r.BackendOptions) -> None: self._note("setup")
    def reconfigure(self, config: object) -> None: self._note("reconfigure")
    def start(self) -> None: self._note("start")
    def sync(self, add: object, delete: object) -> None: self._note("sync")
    def allocate_resources(self, c: r.Container) -> None: self._note("allocate_resources")
    def release_resources(self, c: r.Container) -> None: self._note("release_resources")
    def update_resources(self, c: r.Container) -> None: self._note("update_resources")
    def container_started(self, c: r.Container) -> None: self._note("container_started")

    def export_resource_data(self, c: r.Container) -> dict[str, str]:
        self._note("export_resource_data")
        return {"MEMS": "0"}

    def get_topology_zones(self) -> list:
        self._note("get_topology_zones")
        return []

    def get_extended_resources(self) -> dict:
        self._note("get_extended_resources")
        return {}

    def allocate_claim(self, claim: object, results: object) -> list[ContainerEdits]:
        self._note("allocate_claim")
        return []

    def release_claim(self, uid: str) -> None: self._note("release_claim")


def test_locking_rule(tmp_path) -> None:
    owner = FakeOwner()
    backend = RecordingBackend(owner)
    assert isinstance(backend, r.Backend)
    assert isinstance(owner, r.Owner)
    policy = r.new_policy(backend, r.ContainerCache(str(tmp_path)), r.Options(owner), MACHINE)
    assert policy.active_policy() == "recording"
    c = container("web")
    policy.start({})
    policy.sync([c], [])
    policy.allocate_resources(c)
    policy.update_resources(c)
    policy.container_started(c)
    policy.export_resource_data(c)
    policy.release_resources(c)
    policy.get_topology_zones()
    policy.get_extended_resources()
    policy.allocate_claim(claim("x"), [])
    policy.release_claim("x")
    policy.reconfigure({})
    assert backend.calls == {
        "setup": False, "start": False, "sync": False,  # Synchronize and start: not under the lock
        "allocate_resources": True, "update_resources": True, "container_started": True,
        "export_resource_data": True, "release_resources": True,  # NRI requests
        "get_topology_zones": False, "get_extended_resources": False,  # node agent readers
        "allocate_claim": True, "release_claim": True,  # DRA claims
        "reconfigure": True,  # reconfiguration
    }
    assert not owner.held
    assert (tmp_path / "containers" / "web-app" / "resources.sh").read_text() == 'MEMS="0"\n'


def test_policy_refuses_bad_backend_config(tmp_path) -> None:
    policy = r.new_policy(r.KubeletBackend(), r.ContainerCache(str(tmp_path)), r.Options(FakeOwner()), MACHINE)
    with pytest.raises(r.PolicyError, match="topologyManagerPolicee: unknown key"):
        policy.start({**STATIC, "topologyManagerPolicee": "x"})
    with pytest.raises(r.PolicyError, match="containerZones: expected true or false"):
        policy.start({**STATIC, "containerZones": "yes"})


def test_policy_reports_kubelet_start_refusal(tmp_path) -> None:
    policy = r.new_policy(r.KubeletBackend(), r.ContainerCache(str(tmp_path)), r.Options(FakeOwner()), MACHINE)
    with pytest.raises(r.PolicyError, match='kubelet refused to start: the total amount "0" of type "memory"'):
        policy.start({"memoryManagerPolicy": "Static"})
