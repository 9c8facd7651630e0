"""Pod input as kubectl users have it: `kubectl get pod -o yaml` output, workloads (their pod
template, named after the workload), multi-document files and `kind: List`, tabs, policy spelling."""
from __future__ import annotations

import io

import pytest
import yaml

import memorymanager
import memorymanager.cli.app as cli
from kubeinputs.errors import InputError
from kubeinputs.pod import load_pod_file, load_pod_files, parse_pod, parse_pods
from kubeinputs.qos import get_pod_qos
from tests.helpers.paths import FIXTURES

PODS = FIXTURES / "pods"
STATIC = {"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def test_kubectl_get_pod_output_is_a_pod_its_status_and_bookkeeping_ignored():
    pod = load_pod_file(PODS / "kubectl-get-pod.yaml")
    assert (pod.name, pod.namespace, pod.uid) == ("db-7d9c8b6f5-x2x8q", "prod", "5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b")
    assert [c.name for c in pod.all_containers()] == ["pg"]
    assert get_pod_qos(pod, True) == "Guaranteed"
    doc = yaml.safe_load((PODS / "kubectl-get-pod.yaml").read_text())
    assert {"status", "managedFields", "ownerReferences"} <= set(doc) | set(doc["metadata"])
    bare = {"metadata": {k: doc["metadata"][k] for k in ("name", "namespace", "uid")}, "spec": doc["spec"]}
    assert parse_pod(doc) == parse_pod(bare)  # what kubectl adds changes nothing


@pytest.mark.parametrize("file, name, namespace, containers", [
    ("deployment.yaml", "web", "shop", ["nginx"]),
    ("cronjob.yaml", "nightly-report", "default", ["fetch", "report"]),
])
def test_a_workloads_pod_is_its_template_named_after_it(file, name, namespace, containers):
    pod = load_pod_file(PODS / file)
    assert (pod.name, pod.namespace, pod.uid) == (name, namespace, name if namespace == "default" else f"{namespace}/{name}")
    assert [c.name for c in pod.all_containers()] == containers
    assert all(c.resources.requests == c.resources.limits for c in pod.all_containers())  # defaulted as a pod


@pytest.mark.parametrize("kind, api_version, spec", [
    ("Deployment", "apps/v1", lambda t: {"replicas": 2, "template": t}),
    ("StatefulSet", "apps/v1", lambda t: {"serviceName": "x", "template": t}),
    ("DaemonSet", "apps/v1", lambda t: {"template": t}),
    ("ReplicaSet", "apps/v1", lambda t: {"template": t}),
    ("Job", "batch/v1", lambda t: {"backoffLimit": 1, "template": t}),
    ("CronJob", "batch/v1", lambda t: {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": t}}}),
])
def test_every_workload_kind(kind, api_version, spec):
    template = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}
    doc = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w", "namespace": "ns"}, "spec": spec(template)}
    pod = parse_pod(doc)
    assert (pod.name, pod.namespace, pod.uid, [c.name for c in pod.containers]) == ("w", "ns", "ns/w", ["app"])
    node = memorymanager.Node(memorymanager.synthetic_machine(2, 4 << 30), STATIC)
    assert node.admit(doc).placements["app"].memory == {"memory": 1 << 30}


def test_several_documents_are_several_pods_where_a_list_is_taken():
    pods = load_pod_files(PODS / "three-pods.yaml")
    assert [(p.namespace, p.name, p.uid) for p in pods] == [
        ("team-1", "a", "team-1/a"), ("team-2", "a", "team-2/a"), ("team-1", "db", "team-1/db")]
    listed = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load((PODS / "kubectl-get-pod.yaml").read_text())] * 2}
    assert [p.name for p in parse_pods([listed, None])] == ["db-7d9c8b6f5-x2x8q"] * 2  # empty documents are skipped


def test_several_documents_where_one_pod_is_expected_say_how_many(tmp_path):
    with pytest.raises(InputError) as caught:
        load_pod_file(PODS / "three-pods.yaml")
    assert str(caught.value) == f"{PODS / 'three-pods.yaml'}: (document): 3 YAML documents (separated by ---) where one is expected"
    node = memorymanager.Node(memorymanager.synthetic_machine(2, 4 << 30), STATIC)
    with pytest.raises(InputError, match="3 YAML documents"):
        node.admit(str(PODS / "three-pods.yaml"))
    with pytest.raises(InputError, match=r"^pod: 3 YAML documents"):
        node.admit((PODS / "three-pods.yaml").read_text())
    with pytest.raises(InputError, match=r"a List of 2 items where one v1 Pod is expected"):
        node.admit({"kind": "List", "items": [{}, {}]})


def test_adopt_takes_a_file_of_several_pods(tmp_path):
    node = memorymanager.Node(memorymanager.synthetic_machine(2, 4 << 30), STATIC)
    node.adopt(str(PODS / "three-pods.yaml"))
    assert [(p.namespace, p.name) for p in node.active_pods()] == [("team-1", "a"), ("team-2", "a"), ("team-1", "db")]


def test_a_tab_in_the_indentation_says_tab(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("metadata:\n  name: x\nspec:\n  containers:\n\t- name: app\n")
    with pytest.raises(InputError) as caught:
        load_pod_file(path)
    assert "line 5, column 1" in str(caught.value) and "a tab in the indentation" in str(caught.value)


def test_memory_manager_policy_static_keeps_kubelets_message_and_adds_a_hint(tmp_path):
    node = memorymanager.Node(memorymanager.synthetic_machine(2, 4 << 30), {"memoryManagerPolicy": "static"})
    with pytest.raises(memorymanager.KubeletStartError) as caught:
        node.start()
    assert str(caught.value) == 'unknown policy: "static"'
    assert caught.value.hint == ('hint: memoryManagerPolicy is "static"; kubelet\'s memory manager policies are '
                                 '"None" and "Static", spelled exactly so')
    config = tmp_path / "kubelet.yaml"
    config.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmemoryManagerPolicy: static\n")
    err = io.StringIO()
    code = cli.main(["serve", "--machine", str(FIXTURES / "machines" / "two-nodes.json"), "--kubelet", str(config),
                     "--socket", str(tmp_path / "s.sock")], out=io.StringIO(), err=err)
    assert code == 2
    assert err.getvalue().splitlines() == ['memorymanager: error: unknown policy: "static"', caught.value.hint]
