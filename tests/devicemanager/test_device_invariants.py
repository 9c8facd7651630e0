"""Invariants of the device Manager under random admissions, removals and restarts.

A hypothesis state machine drives the Manager directly on random 1-4 node machines with random
devices (healthy or not, with or without topology, some on two nodes) and random affinities, and
after every step checks: no device is held by two pods or by two long-running containers of one pod
(only a finished init container shares with the container after it), held devices are exactly the
allocated ones, nothing unhealthy or unknown is handed out; removing every pod gives every device
back (the hints equal a fresh node's); a restart from the checkpoint changes nothing.
"""
from __future__ import annotations

import shutil
import tempfile

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from devicemanager.errors import DeviceManagerError
from state.checkpoint_manager import NoSyncFileOps
from devicemanager.manager import new_manager
from kubeinputs.devices import Device
from topologymanager.bitmask import new_bitmask
from topologymanager.hint import TopologyHint

from tests.devicemanager.helpers import container, pod

RESOURCES = ("example.com/gpu", "example.com/vf")


class Store:
    """The topology manager's affinity per (pod, container), set by the test."""

    def __init__(self) -> None:
        self.hints: dict[tuple[str, str], TopologyHint] = {}

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hints.get((pod_uid, container_name), TopologyHint())


@st.composite
def device_lists(draw, nodes: int):
    result = {}
    for resource in RESOURCES:
        devices = []
        for i in range(draw(st.integers(0, 5))):
            shape = draw(st.sampled_from(["one", "one", "none", "two"]))
            if shape == "none" or nodes == 1 and shape == "two":
                numa = None
            elif shape == "one":
                numa = (draw(st.integers(0, nodes - 1)),)
            else:
                numa = tuple(sorted(draw(st.sets(st.integers(0, nodes - 1), min_size=2, max_size=2))))
            devices.append(Device(f"{resource[12:]}{i}", numa, draw(st.booleans()) or draw(st.booleans())))
        result[resource] = devices
    return result


class DeviceMachine(RuleBasedStateMachine):
    """Admit, remove and restart on one node; the invariants below hold after every step."""

    @initialize(data=st.data())
    def setup(self, data):
        self.nodes = data.draw(st.integers(1, 4))
        self.devices = data.draw(device_lists(self.nodes))
        self.dir = tempfile.mkdtemp(prefix="devices-")
        self.active = []
        self.store = Store()
        self.count = 0
        self.manager = self._start()

    def _start(self):
        m = new_manager(list(range(self.nodes)), self.store, self.dir, self.devices, strict_checkpoint=True)
        m.file_ops = NoSyncFileOps()  # durability is not under test here
        m.start(lambda: self.active)
        return m

    def teardown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule(data=st.data())
    def admit(self, data):
        self.count += 1
        uid = f"pod{self.count}"

        def spec(name, restart=None):
            limits = {r: data.draw(st.integers(0, 2)) for r in RESOURCES if data.draw(st.booleans())}
            return container(name, limits, restart)

        inits = [spec(f"init{i}", data.draw(st.sampled_from([None, None, "Always"])))
                 for i in range(data.draw(st.integers(0, 2)))]
        p = pod(uid, [spec(f"app{i}") for i in range(data.draw(st.integers(1, 2)))], inits)
        self.active.append(p)
        try:
            for c in (*p.init_containers, *p.containers):
                nodes = data.draw(st.sets(st.integers(0, self.nodes - 1), max_size=self.nodes))
                self.store.hints[(uid, c.name)] = TopologyHint(new_bitmask(*nodes) if nodes else None, True)
                self.manager.get_topology_hints(p, c)
                self.manager.allocate(p, c)
        except DeviceManagerError:
            self.active.remove(p)  # refused: the pod never becomes active

    @rule(data=st.data())
    def remove(self, data):
        if self.active:
            self.active.remove(data.draw(st.sampled_from(self.active)))
            self.manager.update_allocated_devices()

    @rule()
    def restart(self):
        # kubelet drops what a restored checkpoint holds for pods gone before the restart at its first
        # UpdateAllocatedDevices (the start of any hint or allocate call): compare from there
        before = self._snapshot(self.manager)
        written = self.manager.checkpoint_bytes()
        self.manager = self._start()
        assert self.manager.checkpoint_error is None
        assert self._snapshot(self.manager) == before
        assert self.manager.checkpoint_bytes() == written

    @rule()
    def remove_all(self):
        self.active.clear()
        self.manager.update_allocated_devices()
        assert self.manager.allocated_devices() == {}
        fresh = new_manager(list(range(self.nodes)), Store(), None, self.devices)
        fresh.start(lambda: [])
        probe = pod("probe", [container("c", {r: 1 for r in RESOURCES})])
        assert self.manager.get_topology_hints(probe, probe.containers[0]) == \
            fresh.get_topology_hints(probe, probe.containers[0])

    def _snapshot(self, m):
        m.update_allocated_devices()
        return ({(p.uid, c.name): m.get_devices(p.uid, c.name) for p in self.active
                 for c in (*p.init_containers, *p.containers)}, m.allocated_devices())

    @invariant()
    def no_device_given_twice(self):
        m = self.manager
        m.update_allocated_devices()
        holders: dict[tuple[str, str], list[tuple[str, str, bool]]] = {}
        for p in self.active:
            long_running = {c.name for c in p.containers} | {c.name for c in p.init_containers if c.is_restartable}
            for c in (*p.init_containers, *p.containers):
                for resource, ids in (m.get_devices(p.uid, c.name) or {}).items():
                    declared = {d.id: d for d in self.devices[resource]}
                    for device_id, numa in ids.items():
                        assert device_id in declared
                        assert numa == declared[device_id].numa_nodes
                        holders.setdefault((resource, device_id), []).append((p.uid, c.name, c.name in long_running))
        for (resource, device_id), who in holders.items():
            assert len({uid for uid, _, _ in who}) == 1, (device_id, who)
            assert sum(1 for _, _, running in who if running) <= 1, (device_id, who)
        allocated = m.allocated_devices()
        for resource in RESOURCES:
            held = {d for (r, d) in holders if r == resource}
            assert allocated.get(resource, set()) == held
            healthy = {d.id for d in self.devices[resource] if d.healthy}
            # every held device was healthy when it was picked (health does not change in this machine)
            assert held <= healthy


DeviceMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=12, deadline=None)
TestDeviceInvariants = DeviceMachine.TestCase
