"""End to end: a resource manager's sequence of calls on the Policy, with a fake Owner, and
the `resources.sh` files it leaves on disk."""
from __future__ import annotations

import subprocess

from memorymanager import resmgr as r

from tests.resmgr.helpers import GI, MI, FakeOwner, claim, container, free, make_policy, result


def source(path: str, *names: str) -> list[str]:
    """The values a shell gets for `names` after sourcing the file."""
    script = f'. "{path}"; ' + "; ".join(f'printf "%s\\n" "${n}"' for n in names)
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()


def test_resource_manager_session(tmp_path) -> None:
    owner = FakeOwner()
    policy, _ = make_policy(str(tmp_path), owner=owner)
    assert policy.active_policy() == "kubelet-static"
    assert [d.name for d in owner.devices] == ["memory-numa0", "memory-numa1"]

    # Synchronize: what the runtime already runs, in both lists; its cpuset comes back as an update
    db = container("db", "5Gi")
    assert owner.synchronize([db]) == [r.ContainerUpdate("db-app", None, "0")]
    # the scheduler gave a claim 2Gi on NUMA node 1; kubelet prepares it, then creates the pod
    edits = owner.prepare(claim("mem-1"), [result(1, 2 * GI)])
    assert edits == [r.ContainerEdits(("CLAIMED_MEMS=1",))]
    app = container("app", "2Gi", claims=("mem-1",))
    assert owner.create_container(app) == (r.ContainerUpdate("app-app", None, "0"), [])
    owner.start_container(app)
    owner.with_lock(lambda: policy.export_resource_data(db))

    db_sh = tmp_path / "containers" / "db-app" / "resources.sh"
    app_sh = tmp_path / "containers" / "app-app" / "resources.sh"
    assert db_sh.read_text() == 'MEMS="0"\n'
    assert app_sh.read_text() == 'CLAIMED_MEMS="1"\nMEMS="0"\n'
    assert source(str(app_sh), "MEMS", "CLAIMED_MEMS") == ["0", "1"]
    assert not owner.held and owner.lock.retakes == 0
    # the container's own memory is kubelet's choice (node 0 still fits it); the claim's is apart
    assert free(policy) == {0: 1 * GI - 100 * MI, 1: 6 * GI}
    assert owner.push_calls == 0 and policy.cache.pending() == []  # every change went out in a response

    # the resource manager restarts: same folder, a new Policy; the runtime reports the same containers
    owner2 = FakeOwner()
    again, _ = make_policy(str(tmp_path), owner=owner2)
    assert owner2.prepare(claim("mem-1"), [result(1, 2 * GI)]) == edits  # kubelet prepares again
    assert owner2.synchronize(list(again.cache)) == [r.ContainerUpdate("db-app", None, "0"),
                                                     r.ContainerUpdate("app-app", None, "0")]
    assert free(again) == {0: 1 * GI - 100 * MI, 1: 6 * GI}
    assert again.cache.lookup("app-app").started
    assert app_sh.read_text() == 'CLAIMED_MEMS="1"\nMEMS="0"\n'

    # the pod goes away (no other container moves), then its claim is unprepared
    assert owner2.stop_container(again.cache.lookup("app-app")) == []
    owner2.unprepare("mem-1")
    owner2.with_lock(lambda: again.export_resource_data(db))
    assert db_sh.read_text() == 'MEMS="0"\n'
    assert free(again) == {0: 3 * GI - 100 * MI, 1: 8 * GI}
    zones = again.get_topology_zones()
    assert [(z.name, str(z.resources[0].available)) for z in zones] == [("node-0", "2972Mi"), ("node-1", "8Gi")]
    assert owner2.lock.retakes == 0
