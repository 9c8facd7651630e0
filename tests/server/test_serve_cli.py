"""`memorymanager serve` started as a user starts it (a subprocess), driven over the socket, and
stopped with SIGTERM: socket removed, checkpoint intact; a stale socket is replaced; a path
that cannot be bound is a one-line error."""
from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import yaml

import memorymanager.cli.app as cli
from tests.helpers.paths import FIXTURES, REPO_ROOT
from tests.server.serving import Clients, STATIC, pod

MACHINE = str(FIXTURES / "machines" / "two-nodes-hugepages.json")


def kubelet_file(tmp_path) -> str:
    path = tmp_path / "kubelet.yaml"
    path.write_text(yaml.safe_dump({"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
                                    **STATIC, "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}))
    return str(path)


def start(args: list[str]) -> tuple[subprocess.Popen, list[str]]:
    """`serve ARGS` as a subprocess, once it says it is serving (and where its metrics are)."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "memorymanager", "serve", *args], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    want = (2 if "--metrics-address" in args else 1) + ("--scenario" in args)  # [scenario ...,] serving on, metrics on
    lines: list[str] = []
    deadline = time.time() + 300  # a hang guard: a busy machine may start it slowly
    while time.time() < deadline and len(lines) < want:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
    if len(lines) == want and any(line.startswith("serving on") for line in lines):
        return proc, lines
    proc.kill()
    raise AssertionError(f"serve did not start: {lines} {proc.stderr.read()}")


def test_serve_admit_list_and_sigterm(tmp_path):
    sock = str(tmp_path / "pod-resources" / "kubelet.sock")
    state = tmp_path / "state"
    # a stale socket left by a crashed run
    os.makedirs(os.path.dirname(sock))
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(sock)
    stale.close()
    proc, lines = start(["--machine", MACHINE, "--kubelet", kubelet_file(tmp_path), "--state-dir", str(state),
                         "--socket", sock, "--metrics-address", "127.0.0.1:0"])
    try:
        assert lines[0] == f"serving on unix:{sock}"
        clients = Clients(sock)
        assert clients.admit(pod("db", memory="2Gi")).admitted
        clients.channel.close()
        out = io.StringIO()
        assert cli.main(["podresources", "list", "--socket", sock, "--json"], out=out, err=io.StringIO()) == 0
        listing = json.loads(out.getvalue())
        (db,) = listing["pod_resources"]
        assert db["name"] == "db" and db["containers"][0]["memory"][0]["size"] == str(2 << 30)
        out = io.StringIO()
        assert cli.main(["podresources", "get", "db", "--socket", sock], out=out, err=io.StringIO()) == 0
        assert out.getvalue().startswith("default/db\n  app ")
        err = io.StringIO()
        assert cli.main(["podresources", "get", "nope", "--socket", sock], out=io.StringIO(), err=err) == 2
        assert "UNKNOWN: pod nope in namespace default not found" in err.getvalue()
        url = lines[1].split("metrics on ", 1)[1]
        text = urllib.request.urlopen(url, timeout=120).read().decode()
        assert "kubelet_topology_manager_admission_requests_total 1" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(20)
    assert code == 0, proc.stderr.read()
    assert not os.path.exists(sock)
    out = io.StringIO()
    assert cli.main(["checkpoint", "verify", str(state / "memory_manager_state"), "--policy", "Static"],
                    out=out, err=io.StringIO()) == 0
    # served again from the checkpoint: the pod's memory is still reserved
    proc, _ = start(["--machine", MACHINE, "--kubelet", kubelet_file(tmp_path), "--state-dir", str(state),
                     "--socket", sock])
    try:
        from memorymanager.server.protos.control import control_pb2 as ctl

        clients = Clients(sock)
        state_now = clients.control.MachineState(ctl.MachineStateRequest(), timeout=120)
        memory = {t.resource: t for t in state_now.nodes[0].memory}["memory"]
        assert memory.reserved == 2 << 30
        clients.channel.close()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0


def test_serve_refuses_a_path_that_is_not_a_socket(tmp_path):
    blocker = tmp_path / "file.sock"
    blocker.write_text("not a socket")
    err = io.StringIO()
    code = cli.main(["serve", "--machine", MACHINE, "--socket", str(blocker)], out=io.StringIO(), err=err)
    assert code == 2
    assert err.getvalue() == f"memorymanager: error: cannot bind {blocker}: it exists and is not a socket\n"
    assert blocker.read_text() == "not a socket"


def test_serve_errors_are_one_line(tmp_path):
    err = io.StringIO()
    assert cli.main(["serve", "--socket", str(tmp_path / "s")], out=io.StringIO(), err=err) == 2
    assert "serve needs --machine" in err.getvalue()
    err = io.StringIO()
    long_path = str(tmp_path / ("x" * 120) / "kubelet.sock")
    assert cli.main(["serve", "--machine", MACHINE, "--socket", long_path], out=io.StringIO(), err=err) == 2
    assert "at most 107 bytes" in err.getvalue()
    err = io.StringIO()
    assert cli.main(["serve", "--machine", MACHINE, "--kubelet", kubelet_file(tmp_path), "--scenario",
                     str(FIXTURES / "scenarios" / "memory" / "060-pod-scope-admit-cross-numa.yaml"),
                     "--socket", str(tmp_path / "s")], out=io.StringIO(), err=err) == 2
    assert "--machine: describes another machine than the scenario" in err.getvalue()
    err = io.StringIO()
    bad = {"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
           "memoryManagerPolicy": "Static"}  # no reservedMemory: kubelet refuses to start
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    assert cli.main(["serve", "--machine", MACHINE, "--kubelet", str(path), "--socket", str(tmp_path / "s2")],
                    out=io.StringIO(), err=err) == 2
    assert "is not equal to the value" in err.getvalue()
    assert not os.path.exists(tmp_path / "s2")


def test_serve_a_scenarios_node(tmp_path):
    scenario = FIXTURES / "scenarios" / "memory" / "060-pod-scope-admit-cross-numa.yaml"
    sock = str(tmp_path / "kubelet.sock")
    proc, lines = start(["--scenario", str(scenario), "--socket", sock])
    try:
        assert lines[0].startswith(f"scenario {scenario}: ") and lines[0].endswith(" 0 with unmet expectations")
        out = io.StringIO()
        assert cli.main(["podresources", "list", "--socket", sock, "--json"], out=out, err=io.StringIO()) == 0
        pods = json.loads(out.getvalue())["pod_resources"]
        assert pods and all(c.get("memory") for p in pods for c in p["containers"])
        nodes = {tuple(int(n["ID"]) for n in m["topology"]["nodes"])
                 for p in pods for c in p["containers"] for m in c["memory"]}
        assert (0, 1) in nodes  # the scenario's cross-NUMA placement
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    assert not os.path.exists(sock)


def test_serve_refuses_a_metrics_address_in_use(tmp_path):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    try:
        err = io.StringIO()
        sock = tmp_path / "kubelet.sock"
        code = cli.main(["serve", "--machine", MACHINE, "--socket", str(sock), "--metrics-address", f"127.0.0.1:{port}"],
                        out=io.StringIO(), err=err)
        assert code == 2
        assert err.getvalue().startswith(f"memorymanager: error: cannot serve metrics on 127.0.0.1:{port}: ")
        assert not sock.exists()
    finally:
        busy.close()


def test_serve_declares_devices_from_a_file(tmp_path):
    devices = tmp_path / "devices.yaml"
    devices.write_text("example.com/gpu:\n- {id: g0, numaNodes: [1]}\n- {id: g1, numaNodes: [0], healthy: false}\n")
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text(yaml.safe_dump({"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
                                       "cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
                                       "topologyManagerPolicy": "single-numa-node"}))
    sock = str(tmp_path / "kubelet.sock")
    proc, _ = start(["--machine", str(FIXTURES / "machines" / "dev-dual-socket-2x8.json"), "--kubelet", str(kubelet),
                     "--devices", str(devices), "--socket", sock])
    clients = Clients(sock)
    try:
        spec = {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi",
                                                                      "example.com/gpu": "1"}}}]}
        answer = clients.admit(json.dumps({"metadata": {"name": "p"}, "spec": spec}))
        assert answer.admitted and list(answer.placements[0].numa_nodes) == [1]
        (container,) = clients.list().pod_resources[0].containers
        assert [(d.resource_name, list(d.device_ids), [n.ID for n in d.topology.nodes]) for d in container.devices] \
            == [("example.com/gpu", ["g0"], [1])]
        assert len(container.cpu_ids) == 2 and set(container.cpu_ids) <= {4, 5, 6, 7, 12, 13, 14, 15}
        allocatable = clients.allocatable()
        assert [list(d.device_ids) for d in allocatable.devices] == [["g0"]]  # g1 is unhealthy
        assert list(allocatable.cpu_ids) == list(range(1, 16))
    finally:
        clients.channel.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_serve_refuses_a_bad_devices_file_in_one_line(tmp_path):
    machine = str(FIXTURES / "machines" / "dev-dual-socket-2x8.json")
    cases = {
        "numa.yaml": ("example.com/gpu:\n- {id: g0, numaNodes: [7]}\n", "NUMA node 7 is not on this machine"),
        "twice.yaml": ("example.com/gpu:\n- {id: g0}\n- {id: g0}\n", "g0"),
        "broken.yaml": ("example.com/gpu: [\n", "not valid YAML"),
    }
    for name, (text, reason) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        err = io.StringIO()
        code = cli.main(["serve", "--machine", machine, "--devices", str(path), "--socket", str(tmp_path / "s")],
                        out=io.StringIO(), err=err)
        assert code == 2, name
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and reason in lines[0], lines
        assert "Traceback" not in err.getvalue()
    err = io.StringIO()
    assert cli.main(["serve", "--machine", machine, "--devices", str(tmp_path / "none.yaml"), "--socket",
                     str(tmp_path / "s")], out=io.StringIO(), err=err) == 2
    assert err.getvalue() == f"memorymanager: error: --devices: {tmp_path / 'none.yaml'}: no such file\n"
    assert not (tmp_path / "s").exists()


def test_serve_a_scenario_refuses_other_devices(tmp_path):
    scenario = FIXTURES / "scenarios" / "devices" / "035-dual-socket-gpus-pull-cpus-and-memory.yaml"
    other = tmp_path / "devices.yaml"
    other.write_text("nvidia.com/gpu:\n- {id: g0, numaNodes: [0]}\n- {id: g1, numaNodes: [1]}\n")
    err = io.StringIO()
    assert cli.main(["serve", "--scenario", str(scenario), "--devices", str(other), "--socket", str(tmp_path / "s")],
                    out=io.StringIO(), err=err) == 2
    assert err.getvalue() == f"memorymanager: error: --devices: declares other devices than the scenario {scenario}\n"
