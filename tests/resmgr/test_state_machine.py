"""A hypothesis state machine over random interleavings of sync, allocate, release, claim,
release-claim and restart of the kubelet-static backend, and of container restarts under new
container IDs released in any order (issue 18), checking after every step:

- memory is conserved per NUMA node and resource (allocatable = reserved + free, and the
  reserved bytes are exactly the bytes of the assignments), and never over-committed;
- nothing is allocated twice: the memory manager holds exactly the model's claims and
  placed containers, each once;
- claims are idempotent: preparing a held claim again returns the same edits and changes nothing;
- memory belongs to (pod UID, container name), held by the latest container ID allocated for
  them: releasing a replaced ID releases nothing, releasing the holder releases the memory and
  forgets the IDs it replaced; a container in the claims' key space never touches a claim;
- a restart changes nothing observable (machine state, memory sets, claim records, exports);
- every pending container change is the cpuset its container was given, pushed only under the lock.
"""
from __future__ import annotations

import shutil
import tempfile

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

import memorymanager
from memorymanager import resmgr as r
from memorymanager.resmgr.kubelet_placement import claim_pod_uid

from tests.resmgr.helpers import GI, FakeOwner, claim, container, result

MACHINE = memorymanager.synthetic_machine(2, 4 * GI)
CONFIG = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort",
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
SIZES = st.sampled_from([1, 2, 3, 5])  # GiB; 5 spans both nodes


class ResmgrMachine(RuleBasedStateMachine):
    containers = Bundle("containers")
    claims = Bundle("claims")

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="resmgr-sm-")
        self.counter = 0
        self.placed: dict[str, r.Container] = {}  # container ID -> container, as the model expects
        self.holder: dict[tuple[str, str], str] = {}  # (pod UID, container name) -> the ID holding its memory
        self.held: dict[str, list[r.ContainerEdits]] = {}  # claim UID -> edits
        self.policy = self._start()

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def _start(self) -> r.Policy:
        self.owner = FakeOwner()
        policy = r.new_policy(r.KubeletBackend(), r.ContainerCache(self.dir), r.Options(self.owner), MACHINE)
        self.owner.policy = policy
        policy.start(dict(CONFIG))
        return policy

    def _name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ----- rules -----

    def _placed(self, c: r.Container) -> None:
        """The model after `c` was allocated: cached, and the holder of its (pod UID, name)."""
        self.placed[c.id] = c
        self.holder[(c.pod_uid, c.name)] = c.id

    def _released(self, c: r.Container) -> None:
        """The model after `c` was released: a holder frees the memory and forgets the IDs it
        replaced; any other ID is only forgotten."""
        key = (c.pod_uid, c.name)
        if c.id in self.placed and self.holder.get(key) == c.id:
            del self.holder[key]
            for other in [i for i, x in self.placed.items() if (x.pod_uid, x.name) == key]:
                del self.placed[other]
        self.placed.pop(c.id, None)

    @rule(target=containers, size=SIZES)
    def allocate(self, size: int) -> r.Container:
        c = container(self._name("p"), f"{size}Gi")
        try:
            self.policy.allocate_resources(c)
            self._placed(c)
        except r.PolicyError as err:
            assert "default/" in str(err)  # kubelet's refusal, naming the container
        return c

    @rule(target=containers, c=containers)
    def restart_container(self, c: r.Container) -> r.Container:
        """The same pod's container again under a new container ID (what a container restart
        looks like to NRI); the old ID is released later, or never, in any order."""
        again = r.Container(self._name("id-"), c.pod, c.name)
        before = self.policy.backend.machine_state()
        try:
            self.policy.allocate_resources(again)
        except r.PolicyError as err:
            assert c.id not in self.placed or self.holder.get((c.pod_uid, c.name)) != c.id, err
            return again
        if c.id in self.placed and self.holder.get((c.pod_uid, c.name)) == c.id:
            assert self.policy.backend.machine_state() == before  # the memory is taken over, not placed again
        self._placed(again)
        return again

    @rule(c=consumes(containers))
    def release(self, c: r.Container) -> None:
        self.policy.release_resources(c)
        self.policy.release_resources(c)  # idempotent
        self._released(c)

    @rule(uid=claims)
    def claim_key_container(self, uid: str) -> None:
        """A container whose pod UID is a claim's synthetic pod UID never touches the claim."""
        manifest = {"metadata": {"name": "squatter", "uid": claim_pod_uid(uid)},
                    "spec": {"containers": [{"name": "result-0", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}
        squatter = r.Container(self._name("sq-"), manifest, "result-0")
        before = self.policy.backend.machine_state()
        try:
            self.policy.allocate_resources(squatter)
            raise AssertionError("a container took a claim's key")
        except r.PolicyError as err:
            assert "reserved for DRA claims" in str(err)
        try:
            self.policy.sync([squatter], [])
        except r.PolicyError as err:
            assert "reserved for DRA claims" in str(err)
        self.policy.release_resources(squatter)
        assert self.policy.backend.export_resource_data(squatter) == {}
        assert self.policy.backend.machine_state() == before

    @rule(target=containers, size=SIZES, victims=st.lists(st.integers(0, 50), max_size=2))
    def sync(self, size: int, victims: list[int]) -> r.Container:
        ids = sorted(self.placed)
        delete = [self.placed[ids[v % len(ids)]] for v in victims] if ids else []
        c = container(self._name("s"), f"{size}Gi")
        self.policy.sync([c], delete)  # never fails: what cannot be placed is logged and skipped
        for d in delete:
            self._released(d)
        if self.policy.cache.lookup(c.id) is not None:
            self._placed(c)
        return c

    @rule(target=claims, numa=st.integers(0, 1), size=SIZES)
    def allocate_claim(self, numa: int, size: int) -> str:
        uid = self._name("c")
        try:
            self.held[uid] = self.owner.prepare(claim(uid), [result(numa, size * GI)])
        except r.PolicyError as err:
            assert f"claim default/claim-{uid} ({uid})" in str(err)
        return uid

    @rule(uid=claims, numa=st.integers(0, 1), size=SIZES)
    def prepare_again(self, uid: str, numa: int, size: int) -> None:
        if uid not in self.held:
            return
        before = self.policy.backend.machine_state()
        # the same UID allocates nothing more, whatever the results say this time
        assert self.owner.prepare(claim(uid), [result(numa, size * GI)]) == self.held[uid]
        assert self.policy.backend.machine_state() == before

    @rule(uid=consumes(claims))
    def release_claim(self, uid: str) -> None:
        self.owner.unprepare(uid)
        self.owner.unprepare(uid)
        self.held.pop(uid, None)

    @rule(early=st.booleans())
    def restart(self, early: bool) -> None:
        before = self._observable(self.policy)
        kept = self._restored(self.policy)
        self.policy = self._start()
        assert self._observable(self.policy) == before
        if early:
            # an allocation before Synchronize must not drop or move what the restart restored
            c = container(self._name("e"), "1Gi")
            try:
                self.policy.allocate_resources(c)
                self._placed(c)
            except r.PolicyError:
                pass
            self.policy.sync([x for x in self.policy.cache if x.id != c.id], [])
            assert self._restored(self.policy, skip=c) == kept
        else:
            self.policy.sync(list(self.policy.cache), [])
            assert self._observable(self.policy) == before

    # ----- invariants -----

    def _observable(self, policy: r.Policy) -> tuple:
        backend = policy.backend
        return (
            backend.machine_state(),
            sorted((c.id, c.memset) for c in policy.cache),
            [(x.uid, x.allocations, x.edits) for x in backend.claim_records()],
            sorted((c.id, tuple(sorted(backend.export_resource_data(c).items()))) for c in policy.cache),
        )

    def _restored(self, policy: r.Policy, skip: "r.Container | None" = None) -> tuple:
        """What must survive a restart whatever comes after it: every assignment, memory set,
        claim record and export, leaving out the container `skip` added since."""
        assignments = policy.backend.kubelet.simulated_node.state().get_memory_assignments()
        if skip is not None:
            assignments.pop(skip.pod_uid, None)
        return (
            assignments,
            sorted((c.id, c.memset) for c in policy.cache if skip is None or c.id != skip.id),
            [(x.uid, x.allocations, x.edits) for x in policy.backend.claim_records()],
            sorted((c.id, tuple(sorted(policy.backend.export_resource_data(c).items())))
                   for c in policy.cache if skip is None or c.id != skip.id),
        )

    @invariant()
    def conserved_and_never_overcommitted(self) -> None:
        state = self.policy.backend.machine_state()
        assignments = self.policy.backend.kubelet.simulated_node.state().get_memory_assignments()
        blocks = [b for containers in assignments.values() for bl in containers.values() for b in bl or []]
        for numa, node in state.items():
            for resource, table in (node.memory_map or {}).items():
                assert table.free >= 0 and table.reserved >= 0
                assert table.allocatable == table.reserved + table.free
                if node.cells == [numa]:
                    own = sum(b.size for b in blocks if b.type == resource and b.numa_affinity == [numa])
                    assert table.reserved == own
        for resource in ("memory",):
            total_reserved = sum(n.memory_map[resource].reserved for n in state.values())
            assert total_reserved == sum(b.size for b in blocks if b.type == resource)

    @invariant()
    def nothing_allocated_twice(self) -> None:
        assignments = self.policy.backend.kubelet.simulated_node.state().get_memory_assignments()
        expected = {claim_pod_uid(uid) for uid in self.held} | {pod_uid for pod_uid, _ in self.holder}
        assert set(assignments) == expected
        assert {x.uid for x in self.policy.backend.claim_records()} == set(self.held)
        assert {c.id for c in self.policy.cache} == set(self.placed)
        for (pod_uid, name), holder in self.holder.items():
            # every cached ID of a container exports the memory its holder has
            mems = {self.policy.backend.export_resource_data(c).get("MEMS")
                    for c in self.placed.values() if (c.pod_uid, c.name) == (pod_uid, name)}
            assert len(mems) == 1 and None not in mems, (pod_uid, mems)
        for uid, edits in self.held.items():
            nodes = {int(e.env[0].split("=")[1]) for e in edits}
            pod = assignments[claim_pod_uid(uid)]
            assert [b.numa_affinity for bl in pod.values() for b in bl] == [sorted(nodes)]

    @invariant()
    def pending_changes_are_the_cpusets_given(self) -> None:
        """Every pending change names a cached container and carries the cpuset it was given; nothing
        is ever pushed outside the lock (the owner asserts it) nor the lock taken twice."""
        for change in self.policy.cache.pending():
            c = self.policy.cache.lookup(change.container_id)
            assert c is not None and change.cpuset_mems in (None, c.memset) and change.cpuset_cpus in (None, c.cpus)
            assert (change.cpuset_cpus, change.cpuset_mems) != (None, None)
        assert self.owner.lock.retakes == 0 and not self.owner.held


ResmgrMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=20, deadline=None,
                                           suppress_health_check=[HealthCheck.too_slow])
TestResmgrStateMachine = ResmgrMachine.TestCase
