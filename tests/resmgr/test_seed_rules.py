"""Table tests of the seed's constants, the resources.sh format and the Policy's locking rule
(the calling convention of nri-plugins' resource manager)."""
from __future__ import annotations

import os
import stat
import subprocess
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memorymanager import resmgr as r
from memorymanager.resmgr.types import ContainerEdits

from tests.resmgr.helpers import GI, MACHINE, STATIC, FakeOwner, RetakeError, claim, container, make_policy, result


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


@pytest.mark.parametrize("data, message", [
    ({"X": "a\0b"}, "cannot hold a NUL character"),
    ({"X": "a\ud800"}, "lone surrogate"),
    ({1: "a"}, "a variable name must be a string"),
])
def test_format_exports_refuses_values_no_shell_holds(data: dict, message: str) -> None:
    with pytest.raises(r.PolicyError, match=message):
        r.format_exports(data)


def test_container_folder_is_readable_by_a_container_user(tmp_path) -> None:
    """0755 for the folders and 0644 for the file whatever the umask (a container running as a non-root
    user reads its resources.sh through the bind mount of its folder)."""
    cache = r.ContainerCache(str(tmp_path))
    old = os.umask(0o077)
    try:
        folder = cache.container_directory("web-app")
        path = r.write_exports(folder, {"MEMS": "0"})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(os.path.dirname(folder)).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    os.chmod(folder, 0o700)  # an older folder (this project made them 0710): corrected
    assert stat.S_IMODE(os.stat(cache.container_directory("web-app")).st_mode) == 0o755


def test_container_folder_symlink_is_refused(tmp_path) -> None:
    cache = r.ContainerCache(str(tmp_path / "state"))
    (tmp_path / "state" / "containers").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "state" / "containers" / "web-app")
    with pytest.raises(r.PolicyError, match="is not a folder \\(or is a symbolic link\\)"):
        cache.container_directory("web-app")


VALUES = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=30)


@settings(max_examples=25, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=6))
def test_a_sourcing_shell_gets_every_value(values: list[str]) -> None:
    """Whatever the text (quotes, $, backquotes, backslashes, newlines, non-ASCII), `. resources.sh`
    sets exactly the value and runs nothing; one shell per example."""
    data = {f"V{i}": v for i, v in enumerate(values)}
    with tempfile.TemporaryDirectory() as folder:
        path = r.write_exports(folder, data)
        script = f'. "{path}"; ' + "; ".join(f'printf "%s\\0" "$V{i}"' for i in range(len(values)))
        out = subprocess.run(["sh", "-c", script], capture_output=True, check=True, cwd=folder).stdout
        assert os.listdir(folder) == ["resources.sh"]  # nothing the values could have run left a trace
    assert out.split(b"\0")[:-1] == [v.encode() for v in values]


# ----- extended resources: see test_agent_reconciliation.py -----


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
    def sync(self, add: list, delete: list) -> None:
        self._note("sync")
        self.synced = ([c.id for c in add], [c.id for c in delete])
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
    """The resource manager holds its lock (a plain mutex) around NRI requests other than Synchronize,
    claims and reconfiguration; the Policy calls the backend under it and never takes it again."""
    owner = FakeOwner()
    backend = RecordingBackend(owner)
    assert isinstance(backend, r.Backend)
    assert isinstance(owner, r.Owner)
    policy = r.new_policy(backend, r.ContainerCache(str(tmp_path)), r.Options(owner), MACHINE)
    owner.policy = policy
    assert policy.active_policy() == "recording"
    c = container("web")
    policy.start({})
    gone = container("gone")
    owner.synchronize([c], stale=[gone])
    assert backend.synced == (["web-app"], ["web-app", "gone-app"])  # running ones in both lists
    owner.create_container(c)  # allocate + export
    owner.update_container(c)
    owner.start_container(c)
    owner.stop_container(c)
    policy.get_topology_zones()
    policy.get_extended_resources()
    owner.prepare(claim("x"), [])
    owner.unprepare("x")
    owner.reconfigure({})
    assert backend.calls == {
        "setup": False, "start": False, "sync": False,  # Synchronize and start: not under the lock
        "allocate_resources": True, "update_resources": True, "container_started": True,
        "export_resource_data": True, "release_resources": True,  # NRI requests
        "get_topology_zones": False, "get_extended_resources": False,  # node agent readers
        "allocate_claim": True, "release_claim": True,  # DRA claims
        "reconfigure": True,  # reconfiguration
    }
    assert not owner.held and owner.lock.retakes == 0
    assert (tmp_path / "containers" / "web-app" / "resources.sh").read_text() == 'MEMS="0"\n'


@pytest.mark.parametrize("call", ["allocate_resources", "release_resources", "update_resources",
                                  "container_started", "export_resource_data", "allocate_claim",
                                  "release_claim", "reconfigure"])
def test_policy_never_retakes_the_callers_lock(tmp_path, call: str) -> None:
    """Every call the resource manager makes under its lock, on the kubelet backend, with a non-reentrant
    lock: a re-take fails at once (it would deadlock), an unlocked owner call fails its assertion."""
    policy, owner = make_policy(str(tmp_path))
    c = container("web")
    owner.create_container(c)
    owner.prepare(claim("c"), [result(1, GI)])
    args = {"allocate_resources": (container("api"),), "release_resources": (c,), "update_resources": (c,),
            "container_started": (c,), "export_resource_data": (c,), "allocate_claim": (claim("d"), [result(1, GI)]),
            "release_claim": ("c",), "reconfigure": (dict(STATIC),)}[call]
    with owner:
        getattr(policy, call)(*args)
        assert owner.held
    assert owner.lock.retakes == 0 and not owner.held


def test_policy_lock_probe_catches_a_retake() -> None:
    """The probe itself: a plain threading.Lock taken twice by its holder is reported, not hung on."""
    owner = FakeOwner()
    with owner:
        with pytest.raises(RetakeError, match="taken again by the thread holding it"):
            owner.__enter__()
    assert owner.lock.retakes == 1 and not owner.held


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
