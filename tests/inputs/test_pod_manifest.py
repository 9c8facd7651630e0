"""Pod manifest parsing: real v1 Pod fields accepted, unknown keys refused with suggestions, SetDefaults_Pod."""
import textwrap

import pytest
import yaml

from kubeinputs.errors import InputError
from kubeinputs.pod import aggregate_container_resources, load_pod_file, parse_pod

REAL_POD = textwrap.dedent("""
    apiVersion: v1
    kind: Pod
    metadata:
      name: web
      namespace: prod
      uid: 6f1c3f4e-0000-4000-8000-000000000001
      labels: {app: web}
      annotations: {note: pasted from kubectl}
      creationTimestamp: "2025-01-01T00:00:00Z"
      resourceVersion: "123"
      ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-1, uid: x}]
      managedFields: []
    spec:
      nodeName: node-1
      restartPolicy: Always
      terminationGracePeriodSeconds: 30
      dnsPolicy: ClusterFirst
      serviceAccountName: default
      securityContext: {runAsNonRoot: true}
      tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
      affinity: {nodeAffinity: {}}
      volumes: [{name: data, emptyDir: {}}]
      priority: 0
      enableServiceLinks: true
      initContainers:
      - name: setup
        image: busybox
        command: [sh, -c, "true"]
        resources:
          limits: {cpu: "1", memory: 1Gi}
      - name: proxy
        image: envoy
        restartPolicy: Always
        resources:
          requests: {cpu: 500m, memory: 256Mi}
      containers:
      - name: app
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        args: [--port, "8080"]
        env: [{name: A, value: b}]
        ports: [{containerPort: 8080, protocol: TCP}]
        volumeMounts: [{name: data, mountPath: /data}]
        livenessProbe: {httpGet: {path: /, port: 8080}}
        resizePolicy: [{resourceName: memory, restartPolicy: NotRequired}]
        securityContext: {allowPrivilegeEscalation: false}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
        resources:
          limits: {cpu: "2", memory: 2Gi, hugepages-2Mi: 1Gi}
          requests: {cpu: "2"}
    status:
      phase: Running
      qosClass: Burstable
""")


def test_real_manifest_is_accepted_and_defaulted():
    pod = parse_pod(yaml.safe_load(REAL_POD), "steps[0].admit")
    assert (pod.name, pod.uid, pod.namespace) == ("web", "6f1c3f4e-0000-4000-8000-000000000001", "prod")
    assert [c.name for c in pod.init_containers] == ["setup", "proxy"]
    assert [c.name for c in pod.containers] == ["app"]
    setup, proxy = pod.init_containers
    app = pod.containers[0]
    # SetDefaults_Pod: limits copied into missing requests (init containers too)
    assert {k: str(v) for k, v in setup.resources.requests.items()} == {"cpu": "1", "memory": "1Gi"}
    assert {k: str(v) for k, v in app.resources.requests.items()} == {"cpu": "2", "memory": "2Gi", "hugepages-2Mi": "1Gi"}
    assert proxy.is_restartable and not setup.is_restartable
    assert proxy.resources.limits == {}
    assert pod.resources is None
    assert [c.name for c in pod.all_containers()] == ["setup", "proxy", "app"]
    assert pod.find_container("proxy") is proxy and pod.find_container("nope") is None


def test_uid_and_namespace_default():
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert (pod.uid, pod.namespace) == ("p", "default")
    assert pod.containers[0].resources.requests == {} and pod.containers[0].resources.limits == {}


def test_explicit_requests_are_kept():
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}}}]}})
    assert str(pod.containers[0].resources.requests["memory"]) == "1Gi"


def test_quantities_keep_go_forms():
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"memory": 1073741824, "cpu": 1.5, "hugepages-1Gi": " 2Gi "}}}]}})
    limits = pod.containers[0].resources.limits
    assert limits["memory"].as_int64() == 1 << 30
    assert str(limits["cpu"]) == "1500m"
    assert str(limits["hugepages-1Gi"]) == "2Gi"


def base_pod(**container):
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", **container}]}}


@pytest.mark.parametrize("doc,where,reason", [
    (base_pod(resource={}), "x.spec.containers[0].resource", 'unknown key; did you mean "resources"?'),
    (base_pod(resources={"limit": {}}), "x.spec.containers[0].resources.limit", 'unknown key; did you mean "limits"?'),
    ({"metadata": {"name": "p"}, "spec": {"container": []}}, "x.spec.container", 'unknown key; did you mean "containers"?'),
    ({"metadata": {"name": "p"}, "spex": {}}, "x.spex", 'unknown key; did you mean "spec"?'),
    ({"metadata": {"nmae": "p"}, "spec": {}}, "x.metadata.nmae", 'unknown key; did you mean "name"?'),
    ({"metadata": {"name": "p"}, "spec": {"containers": [], "zzz": 1}}, "x.spec.zzz", "unknown key"),
    (base_pod(resources={"limits": {"memory": "1GB"}}), "x.spec.containers[0].resources.limits.memory",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (base_pod(resources={"requests": {"memory": "1mi"}}), "x.spec.containers[0].resources.requests.memory",
     "unable to parse quantity's suffix"),
    (base_pod(resources={"limits": ["memory"]}), "x.spec.containers[0].resources.limits", "expected a map, got list"),
    (base_pod(resources={"limits": {"memory": ["1Gi"]}}), "x.spec.containers[0].resources.limits.memory",
     'expected a quantity (a string such as "1Gi"), got list'),
    ({"metadata": {"name": "p"}, "spec": {"containers": {"name": "c"}}}, "x.spec.containers", "expected a list, got map"),
    ({"metadata": {}, "spec": {"containers": [{"name": "c"}]}}, "x.metadata.name", "Required value"),
    ({"metadata": {"name": "p"}}, "x.spec", "Required value"),
    ({"metadata": {"name": "p"}, "spec": {}}, "x.spec.containers", "Required value"),
    ({"metadata": {"name": "p"}, "spec": {"containers": []}}, "x.spec.containers", "Required value"),
    (base_pod(name=None), "x.spec.containers[0].name", "Required value"),
    ({"metadata": {"name": "p"}, "spec": {"initContainers": [{"name": "c"}], "containers": [{"name": "c"}]}},
     "x.spec.containers[0].name", 'Duplicate value: "c"'),
    ({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}, {"name": "c"}]}},
     "x.spec.containers[1].name", 'Duplicate value: "c"'),
    (base_pod(restartPolicy="Always"), "x.spec.containers[0].restartPolicy",
     "Forbidden: may not be set for non-init containers"),
    ({"metadata": {"name": "p"}, "spec": {"initContainers": [{"name": "i", "restartPolicy": "OnFailure"}],
                                           "containers": [{"name": "c"}]}},
     "x.spec.initContainers[0].restartPolicy", 'Unsupported value: "OnFailure": supported values: "Always"'),
    ({"apiVersion": "apps/v1", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}},
     "x.apiVersion", "expected \"v1\", got 'apps/v1'"),
    ({"kind": "Service", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}},
     "x.kind", "expected \"Pod\" or a workload (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob), "
               "got 'Service'"),
    ({"kind": "Deployment", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}},
     "x.spec.template", "Required value (the pod template of the Deployment)"),
    ({"apiVersion": "v1", "kind": "Deployment", "metadata": {"name": "p"}, "spec": {"template": {}}},
     "x.apiVersion", "expected 'apps/v1' for a Deployment, got 'v1'"),
    ({"kind": "Job", "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
     "x.metadata.name", "Required value (the pod is named after its workload)"),
    ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
      "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "resourcez": {}}]}}}}}},
     "x.spec.jobTemplate.spec.template.spec.containers[0].resourcez", 'unknown key; did you mean "resources"?'),
    ({"kind": "List", "items": [{}, {}]}, "x.kind", "a List of 2 items where one v1 Pod is expected"),
    (["not", "a", "pod"], "x", "expected a map (a v1 Pod manifest), got list"),
    (base_pod(resources={"limits": {"memory": "-1Gi"}}), "x.spec.containers[0].resources.limits.memory",
     'Invalid value: "-1Gi": must be greater than or equal to 0'),
    (base_pod(resources={"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}),
     "x.spec.containers[0].resources.requests.memory",
     'Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi'),
    (base_pod(resources={"requests": {"hugepages-2Mi": "2Mi"}, "limits": {"hugepages-2Mi": "4Mi"}}),
     "x.spec.containers[0].resources.requests.hugepages-2Mi",
     'Invalid value: "2Mi": must be equal to hugepages-2Mi limit of 4Mi'),
    ({"metadata": {"name": 5}, "spec": {"containers": [{"name": "c"}]}}, "x.metadata.name", "expected a string, got integer"),
])
def test_bad_manifests(doc, where, reason):
    with pytest.raises(InputError) as err:
        parse_pod(doc, "x")
    assert err.value.where == where
    assert err.value.reason == reason
    assert str(err.value) == f"{where}: {reason}"


def test_error_path_without_prefix():
    with pytest.raises(InputError) as err:
        parse_pod(base_pod(resource={}))
    assert str(err.value) == 'spec.containers[0].resource: unknown key; did you mean "resources"?'


def test_load_pod_file(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(REAL_POD)
    assert load_pod_file(path).name == "web"
    path.write_text("metadata: {name: p}\nspec: {containers: [{name: c, resourcez: {}}]}\n")
    with pytest.raises(InputError) as err:
        load_pod_file(path)
    assert str(err.value) == f'{path}: spec.containers[0].resourcez: unknown key; did you mean "resources"?'
    with pytest.raises(InputError, match="cannot read file"):
        load_pod_file(tmp_path / "missing.yaml")
    path.write_text("metadata: [unclosed\n")
    with pytest.raises(InputError, match="not valid YAML: line 2, column 1"):
        load_pod_file(path)


# -- pod-level resources defaulting (PodLevelResources) ------------------------------------------------------
def pod_level(resources, containers, init=()):
    return {"metadata": {"name": "p"}, "spec": {"resources": resources, "containers": list(containers),
                                                "initContainers": list(init)}}


def strs(resource_list):
    return {k: str(v) for k, v in resource_list.items()}


def test_pod_level_requests_default_to_limits_without_container_requests():
    pod = parse_pod(pod_level({"limits": {"cpu": "2", "memory": "2Gi"}}, [{"name": "c"}]))
    assert strs(pod.resources.requests) == {"cpu": "2", "memory": "2Gi"}


def test_pod_level_requests_default_to_aggregated_container_requests():
    pod = parse_pod(pod_level({"limits": {"cpu": "2", "memory": "2Gi"}},
                              [{"name": "a", "resources": {"requests": {"memory": "256Mi"}}},
                               {"name": "b", "resources": {"requests": {"memory": "256Mi"}}}]))
    assert strs(pod.resources.requests) == {"memory": "512Mi", "cpu": "2"}


def test_pod_level_defaulting_follows_the_gate():
    doc = pod_level({"limits": {"cpu": "2", "memory": "2Gi"}}, [{"name": "c"}])
    assert parse_pod(doc, pod_level_resources=False).resources.requests == {}


def test_pod_level_hugepage_limits_default_from_containers():
    pod = parse_pod(pod_level({"limits": {"cpu": "1", "memory": "1Gi"}},
                              [{"name": "a", "resources": {"limits": {"hugepages-2Mi": "100Mi"}}},
                               {"name": "b", "resources": {"limits": {"hugepages-2Mi": "100Mi"}}}]))
    assert strs(pod.resources.limits) == {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "200Mi"}
    assert strs(pod.resources.requests)["hugepages-2Mi"] == "200Mi"


def test_pod_level_empty_resources_stay_empty():
    pod = parse_pod(pod_level({}, [{"name": "c", "resources": {"limits": {"memory": "1Gi"}}}]))
    assert pod.resources is not None
    assert pod.resources.requests == {} and pod.resources.limits == {}


def test_aggregate_requests_with_sidecars():
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {
        "initContainers": [
            {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"memory": "100Mi"}}},
            {"name": "big-init", "resources": {"requests": {"memory": "1Gi"}}},
        ],
        "containers": [{"name": "app", "resources": {"requests": {"memory": "200Mi"}}}]}})
    # app + sidecar = 300Mi; the init container runs next to the sidecar: 1Gi + 100Mi
    assert str(aggregate_container_resources(pod, "requests")["memory"]) == "1124Mi"


def test_pod_level_resource_helpers_are_kubelets():
    """IsSupportedPodLevelResource / IsPodLevelResourcesSet, the one copy both managers use."""
    from types import SimpleNamespace

    from kubeinputs.pod import is_pod_level_resources_set, is_supported_pod_level_resource

    assert [n for n in ("cpu", "memory", "hugepages-2Mi", "hugepages-1Gi", "ephemeral-storage", "nvidia.com/gpu")
            if is_supported_pod_level_resource(n)] == ["cpu", "memory", "hugepages-2Mi", "hugepages-1Gi"]
    assert not is_pod_level_resources_set(SimpleNamespace(resources=None))
    assert not is_pod_level_resources_set(SimpleNamespace())
    assert not is_pod_level_resources_set(SimpleNamespace(resources=SimpleNamespace(requests=None, limits={})))
    assert not is_pod_level_resources_set(SimpleNamespace(resources=SimpleNamespace(requests={"example.com/x": 1},
                                                                                    limits=None)))
    assert is_pod_level_resources_set(SimpleNamespace(resources=SimpleNamespace(requests={}, limits={"hugepages-2Mi": 1})))


def test_managers_share_the_pod_level_helpers():
    import memorymanager.requests
    import topologymanager.scope
    from kubeinputs import pod

    assert memorymanager.requests.is_pod_level_resources_set is pod.is_pod_level_resources_set
    assert topologymanager.scope.is_pod_level_resources_set is pod.is_pod_level_resources_set


# -- what the API server refuses in metadata and pod-level resources (issue 18, item 4) -------------------
LABEL_VALUE_RULE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def labelled(labels, key="labels"):
    return {"metadata": {"name": "p", key: labels}, "spec": {"containers": [{"name": "c"}]}}


@pytest.mark.parametrize("value,kind", [(True, "boolean"), (0, "integer"), (1 << 70, "integer"), (1.5, "number"),
                                        (["a"], "list"), ({"a": "b"}, "map"), (None, "null")])
@pytest.mark.parametrize("key", ["labels", "annotations"])
def test_label_and_annotation_values_are_strings(value, kind, key):
    with pytest.raises(InputError) as err:
        parse_pod(labelled({"app": value}, key))
    assert str(err.value) == f"metadata.{key}.app: expected a string, got {kind}"


@pytest.mark.parametrize("labels,reason", [
    ({"app": "a b"}, 'Invalid value: "a b": ' + LABEL_VALUE_RULE),
    ({"app": "x" * 64}, 'Invalid value: "' + "x" * 64 + '": must be no more than 63 characters'),
    ({"app": "-x"}, 'Invalid value: "-x": ' + LABEL_VALUE_RULE),
    ({"a/b/c": "x"}, 'Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '
                     "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                     "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
                     "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
    ({"/x": "y"}, 'Invalid value: "/x": prefix part must be non-empty'),
])
def test_label_rules_are_the_api_servers(labels, reason):
    with pytest.raises(InputError) as err:
        parse_pod(labelled(labels))
    assert (err.value.where, err.value.reason) == ("metadata.labels", reason)


def test_valid_labels_and_annotations_are_accepted():
    doc = labelled({"app": "web", "example.com/tier": "", "v": "1.2_3-a"})
    doc["metadata"]["annotations"] = {"Example.com/Note": "any text, spaces and all: {}"}
    assert parse_pod(doc).name == "p"


def guaranteed(name, memory="1Gi", cpu="1"):
    return {"name": name, "resources": {"limits": {"cpu": cpu, "memory": memory}}}


@pytest.mark.parametrize("resources,containers,where,reason", [
    ({"limits": {"memory": "-1Gi"}}, [{"name": "c"}], "spec.resources.limits.memory",
     'Invalid value: "-1Gi": must be greater than or equal to 0'),
    ({"requests": {"cpu": "-1"}}, [{"name": "c"}], "spec.resources.requests.cpu",
     'Invalid value: "-1": must be greater than or equal to 0'),
    # pod requests default to the containers' aggregate (2Gi), past the pod limit
    ({"limits": {"cpu": "2", "memory": "1Gi"}}, [guaranteed("a"), guaranteed("b")], "spec.resources.requests.memory",
     'Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi'),
    ({"requests": {"memory": "1Gi"}}, [guaranteed("a"), guaranteed("b")], "spec.resources.requests.memory",
     'Invalid value: "1Gi": must be greater than or equal to aggregate container requests of 2Gi'),
    ({"requests": {"memory": "3Gi"}, "limits": {"memory": "3Gi", "hugepages-2Mi": "2Mi"}},
     [{"name": "a", "resources": {"limits": {"memory": "1Gi", "hugepages-2Mi": "4Mi"}}}],
     "spec.resources.requests.hugepages-2Mi",  # pod hugepage requests default to the pod limit
     'Invalid value: "2Mi": must be greater than or equal to aggregate container requests of 4Mi'),
    ({"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}},
     [{"name": "a", "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "3Gi"}}}],
     "spec.containers[0].resources.limits.memory", 'Invalid value: "3Gi": must be less than or equal to pod limits of 2Gi'),
])
def test_pod_level_resources_the_api_server_refuses(resources, containers, where, reason):
    with pytest.raises(InputError) as err:
        parse_pod(pod_level(resources, containers))
    assert (err.value.where, err.value.reason) == (where, reason)


def test_pod_level_resources_covering_the_containers_are_accepted():
    pod = parse_pod(pod_level({"limits": {"cpu": "2", "memory": "3Gi"}}, [guaranteed("a"), guaranteed("b")]))
    assert strs(pod.resources.requests) == {"cpu": "2", "memory": "2Gi"}


def test_pod_level_rules_follow_the_gate():
    doc = pod_level({"limits": {"memory": "-1Gi"}}, [{"name": "c"}])
    assert parse_pod(doc, pod_level_resources=False).name == "p"  # the API server drops the field
