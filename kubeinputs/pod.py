"""Pods and containers: the parts of a v1 Pod that the kubelet's resource managers read.

`parse_pod` reads a pasted v1 Pod manifest: every real Pod / ObjectMeta / PodSpec / Container field
name is accepted (those the managers do not read are ignored), an unknown key is an InputError with a
suggestion, and the API defaulting kubelet applies to static pods runs (SetDefaults_Pod: container and
init-container limits copied into missing requests, and, with PodLevelResources, pod-level requests
and hugepage limits defaulted as pkg/apis/core/v1/defaults.go does).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

from kubeinputs.errors import (InputError, check_keys, expect_list, expect_map, expect_str, index_path, join_path,
                               type_name)
from kubeinputs.devices import integer_resource_error
from kubeinputs.goformat import go_quote
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.reader import load_file_documents, parse_file
from kubeinputs.quantity import Quantity, QuantityError, unmarshal_quantity
from kubeinputs import validation

if TYPE_CHECKING:  # only in annotations: pathlib is slow to import
    from pathlib import Path

RESTART_POLICY_ALWAYS = "Always"
HUGEPAGES_PREFIX = "hugepages-"
DEFAULT_NAMESPACE = "default"

POD_KEYS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
OBJECT_META_KEYS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
    "ownerReferences", "finalizers", "managedFields",
})
POD_SPEC_KEYS = frozenset({
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork",
    "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
    "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority",
    "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
    "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims",
    "resources", "hostnameOverride", "workloadRef",
})
CONTAINER_KEYS = frozenset({
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
    "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    "securityContext", "stdin", "stdinOnce", "tty",
})
RESOURCE_REQUIREMENTS_KEYS = frozenset({"limits", "requests", "claims"})
# Container fields the managers do not read, with the JSON type the API server decodes them as: a
# value of another type is refused as decoding refuses it (`image: true`).
_CONTAINER_STRING_KEYS = ("image", "workingDir", "terminationMessagePath", "terminationMessagePolicy",
                          "imagePullPolicy")
_CONTAINER_BOOL_KEYS = ("stdin", "stdinOnce", "tty")
_CONTAINER_LIST_KEYS = ("command", "args", "ports", "envFrom", "env", "resizePolicy", "restartPolicyRules",
                        "volumeMounts", "volumeDevices")
_CONTAINER_MAP_KEYS = ("livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "securityContext")


@dataclass
class ResourceRequirements:
    """`resources: {requests, limits}`, after kubelet's defaulting (limits copied into missing requests)."""

    requests: dict[str, Quantity] = field(default_factory=dict)
    limits: dict[str, Quantity] = field(default_factory=dict)


@dataclass
class Container:
    """A container or init container. `restart_policy` "Always" on an init container makes it a sidecar."""

    name: str
    resources: ResourceRequirements = field(default_factory=ResourceRequirements)
    restart_policy: Optional[str] = None

    @property
    def is_restartable(self) -> bool:
        """A restartable init container (sidecar): `restartPolicy: Always`."""
        return self.restart_policy == RESTART_POLICY_ALWAYS


@dataclass
class Pod:
    """A v1 Pod: metadata.name / uid (see `default_pod_uid`) / namespace, spec.initContainers,
    spec.containers, and optional pod-level spec.resources (None when unset)."""

    name: str
    uid: str
    namespace: str = DEFAULT_NAMESPACE
    init_containers: list[Container] = field(default_factory=list)
    containers: list[Container] = field(default_factory=list)
    resources: Optional[ResourceRequirements] = None

    def all_containers(self) -> list[Container]:
        """Init containers, then app containers, in spec order."""
        return [*self.init_containers, *self.containers]

    def find_container(self, name: str) -> Optional[Container]:
        """The init or app container named `name`, or None."""
        for c in self.all_containers():
            if c.name == name:
                return c
        return None


# -- identity ------------------------------------------------------------------------------------------------
def default_pod_uid(name: str, namespace: Optional[str] = None) -> str:
    """The UID of a pod whose manifest gives none (the project's one identity rule): the name in
    namespace `default` or without one, else `NAMESPACE/NAME`, so that two pods of one name in two
    namespaces are two pods (kubelet keys its state by UID)."""
    if namespace in (None, "", DEFAULT_NAMESPACE):
        return name
    return f"{namespace}/{name}"


def pod_label(pod: Pod) -> str:
    """`NAMESPACE/NAME` for messages (just the name in namespace `default`)."""
    return pod.name if pod.namespace == DEFAULT_NAMESPACE else f"{pod.namespace}/{pod.name}"


def identity_conflict(known: Pod, arriving: Pod) -> Optional[str]:
    """Why `arriving` cannot be the pod `known` of the same UID (another name or namespace), or None."""
    if known.uid != arriving.uid or (known.namespace, known.name) == (arriving.namespace, arriving.name):
        return None
    return (f"pod UID {known.uid!r} is already the UID of pod {known.namespace}/{known.name}; "
            f"pod {arriving.namespace}/{arriving.name} cannot have it too (a UID names one pod: give each pod "
            "its own metadata.uid, or leave it out)")


# -- parsing -------------------------------------------------------------------------------------------------
def parse_resource_list(value: Any, where: str, *, pod_level: bool = False,
                        limits: Limits = DEFAULT_LIMITS) -> dict[str, Quantity]:
    """A ResourceList map (resource name -> quantity); a bad name or quantity names its path and the API
    server's text."""
    raw = expect_map(value, where)
    result: dict[str, Quantity] = {}
    check_name = validation.pod_resource_name_error if pod_level else validation.container_resource_name_error
    for name, amount in raw.items():
        path = join_path(where, name)
        problem = check_name(name)
        if problem is not None:
            if problem.startswith("Unsupported value"):
                raise InputError(path, problem.replace("Unsupported value", "Unsupported value: " + go_quote(name), 1))
            raise InputError(path, validation.invalid(name, problem))
        if amount is not None and not isinstance(amount, (str, int, float)):
            raise InputError(path, f"expected a quantity (a string such as \"1Gi\"), got {type_name(amount)}")
        try:
            result[name] = unmarshal_quantity(amount, limits.max_number_digits)
        except QuantityError as err:
            raise InputError(path, str(err)) from None
    return result


def parse_resource_requirements(value: Any, where: str, *, pod_level: bool = False,
                                limits: Limits = DEFAULT_LIMITS) -> ResourceRequirements:
    """A `resources` map: requests and limits as given (no defaulting here)."""
    raw = expect_map(value, where)
    check_keys(raw, where, RESOURCE_REQUIREMENTS_KEYS)
    expect_list(raw.get("claims"), join_path(where, "claims"))
    return ResourceRequirements(
        requests=parse_resource_list(raw.get("requests"), join_path(where, "requests"), pod_level=pod_level,
                                     limits=limits),
        limits=parse_resource_list(raw.get("limits"), join_path(where, "limits"), pod_level=pod_level, limits=limits),
    )


def _check_field_types(raw: dict, where: str) -> None:
    """The container fields the managers ignore still have to decode as their Go types."""
    from kubeinputs.errors import expect_bool

    for key in _CONTAINER_STRING_KEYS:
        if raw.get(key) is not None:
            expect_str(raw[key], join_path(where, key))
    for key in _CONTAINER_BOOL_KEYS:
        if raw.get(key) is not None:
            expect_bool(raw[key], join_path(where, key))
    for key in _CONTAINER_LIST_KEYS:
        expect_list(raw.get(key), join_path(where, key))
    for key in _CONTAINER_MAP_KEYS:
        expect_map(raw.get(key), join_path(where, key))


def _parse_container(value: Any, where: str, *, init: bool, limits: Limits) -> Container:
    """One container or init container map (restartPolicy checked as API validation does)."""
    raw = expect_map(value, where, "a map (a container)")
    check_keys(raw, where, CONTAINER_KEYS)
    if "name" not in raw or raw["name"] in (None, ""):
        raise InputError(join_path(where, "name"), "Required value")
    name = expect_str(raw["name"], join_path(where, "name"))
    problem = validation.dns1123_label_error(name)
    if problem is not None:
        raise InputError(join_path(where, "name"), validation.invalid(name, problem))
    _check_field_types(raw, where)
    restart_policy = raw.get("restartPolicy")
    if restart_policy is not None:
        policy_path = join_path(where, "restartPolicy")
        restart_policy = expect_str(restart_policy, policy_path)
        if not init:
            raise InputError(policy_path, "Forbidden: may not be set for non-init containers")
        if restart_policy != RESTART_POLICY_ALWAYS:
            raise InputError(policy_path, f'Unsupported value: "{restart_policy}": supported values: "Always"')
    resources = parse_resource_requirements(raw.get("resources"), join_path(where, "resources"), limits=limits)
    return Container(name=name, resources=resources, restart_policy=restart_policy)


def _parse_containers(value: Any, where: str, *, init: bool, limits: Limits) -> list[Container]:
    """A containers / initContainers list."""
    items = expect_list(value, where)
    return [_parse_container(item, index_path(where, i), init=init, limits=limits) for i, item in enumerate(items)]


# Workloads whose pod template is taken as the pod (kind -> apiVersion, path of the template in the spec).
WORKLOAD_TEMPLATES = {
    "Deployment": ("apps/v1", ("template",)),
    "StatefulSet": ("apps/v1", ("template",)),
    "DaemonSet": ("apps/v1", ("template",)),
    "ReplicaSet": ("apps/v1", ("template",)),
    "Job": ("batch/v1", ("template",)),
    "CronJob": ("batch/v1", ("jobTemplate", "spec", "template")),
}
LIST_KINDS = ("List", "PodList")
POD_TEMPLATE_KEYS = frozenset({"metadata", "spec"})


def _workload_pod(raw: dict, where: str) -> tuple[dict, str]:
    """The pod of a workload manifest: its pod template, named after the workload and in its namespace
    (the workload's other fields are not the pod's and are ignored); with the template's path."""
    kind = raw["kind"]
    api_version, template_keys = WORKLOAD_TEMPLATES[kind]
    if raw.get("apiVersion") not in (None, api_version):
        raise InputError(join_path(where, "apiVersion"), f"expected {api_version!r} for a {kind}, got {raw['apiVersion']!r}")
    meta_path = join_path(where, "metadata")
    meta = expect_map(raw.get("metadata"), meta_path)
    if meta.get("name") in (None, ""):
        raise InputError(join_path(meta_path, "name"), "Required value (the pod is named after its workload)")
    name = expect_str(meta["name"], join_path(meta_path, "name"))
    problem = validation.dns1123_subdomain_error(name)
    if problem is not None:
        raise InputError(join_path(meta_path, "name"), validation.invalid(name, problem))
    node, path = raw, where
    for key in ("spec", *template_keys):
        path = join_path(path, key)
        if not isinstance(node, dict) or node.get(key) is None:
            raise InputError(path, f"Required value (the pod template of the {kind})")
        node = expect_map(node[key], path)
    check_keys(node, path, POD_TEMPLATE_KEYS)
    template_meta = dict(expect_map(node.get("metadata"), join_path(path, "metadata")))
    template_meta["name"] = name
    for key in ("namespace",):
        if meta.get(key) not in (None, "") and template_meta.get(key) in (None, ""):
            template_meta[key] = meta[key]
    template_meta.pop("uid", None)
    return {"metadata": template_meta, "spec": node.get("spec")}, path


def pod_documents(doc: Any, where: str = "") -> list[tuple[Any, str]]:
    """The pod manifests one decoded document holds, with their paths: the items of a `kind: List`
    (kubectl get pods -o yaml), else the document itself."""
    if isinstance(doc, dict) and doc.get("kind") in LIST_KINDS:
        items = expect_list(doc.get("items"), join_path(where, "items"))
        return [(item, index_path(join_path(where, "items"), i)) for i, item in enumerate(items)]
    return [(doc, where)]


def parse_pod(doc: Any, where: str = "", *, pod_level_resources: bool = True, limits: Limits = DEFAULT_LIMITS) -> Pod:
    """A v1 Pod manifest (decoded YAML/JSON) as a defaulted Pod; raises InputError naming the bad path.

    What `kubectl get pod -o yaml` prints is a manifest too (its status, managedFields and owner
    references are read and ignored), and so is a workload (Deployment, StatefulSet, DaemonSet,
    ReplicaSet, Job, CronJob): its pod template, named after the workload. `pod_level_resources` is
    the PodLevelResources gate (on by default in v1.37), which enables the pod-level defaulting rules;
    `limits` bound the quantities (max_number_digits)."""
    raw = expect_map(doc, where, "a map (a v1 Pod manifest)")
    if raw.get("kind") in WORKLOAD_TEMPLATES:
        raw, where = _workload_pod(raw, where)
    elif raw.get("kind") in LIST_KINDS:
        count = len(raw["items"]) if isinstance(raw.get("items"), list) else 0
        raise InputError(join_path(where, "kind"), f"a {raw['kind']} of {count} items where one v1 Pod is expected")
    check_keys(raw, where, POD_KEYS)
    if "apiVersion" in raw and raw["apiVersion"] != "v1":
        raise InputError(join_path(where, "apiVersion"), f'expected "v1", got {raw["apiVersion"]!r}')
    if "kind" in raw and raw["kind"] != "Pod":
        raise InputError(join_path(where, "kind"), f'expected "Pod" or a workload ({", ".join(WORKLOAD_TEMPLATES)}), '
                                                   f'got {raw["kind"]!r}')

    meta_path = join_path(where, "metadata")
    meta = expect_map(raw.get("metadata"), meta_path)
    check_keys(meta, meta_path, OBJECT_META_KEYS)
    if meta.get("name") in (None, ""):
        raise InputError(join_path(meta_path, "name"), "Required value")
    name = expect_str(meta["name"], join_path(meta_path, "name"))
    problem = validation.dns1123_subdomain_error(name)
    if problem is not None:
        raise InputError(join_path(meta_path, "name"), validation.invalid(name, problem))
    namespace = meta.get("namespace")
    namespace = DEFAULT_NAMESPACE if namespace in (None, "") else expect_str(namespace, join_path(meta_path, "namespace"))
    problem = validation.dns1123_label_error(namespace)
    if problem is not None:
        raise InputError(join_path(meta_path, "namespace"), validation.invalid(namespace, problem))
    uid = meta.get("uid")
    uid = default_pod_uid(name, namespace) if uid in (None, "") else expect_str(uid, join_path(meta_path, "uid"))
    _check_labels(meta.get("labels"), join_path(meta_path, "labels"))
    _check_annotations(meta.get("annotations"), join_path(meta_path, "annotations"))

    spec_path = join_path(where, "spec")
    if raw.get("spec") is None:
        raise InputError(spec_path, "Required value")
    spec = expect_map(raw["spec"], spec_path)
    check_keys(spec, spec_path, POD_SPEC_KEYS)
    init_containers = _parse_containers(spec.get("initContainers"), join_path(spec_path, "initContainers"), init=True,
                                        limits=limits)
    containers = _parse_containers(spec.get("containers"), join_path(spec_path, "containers"), init=False,
                                   limits=limits)
    if not containers:
        raise InputError(join_path(spec_path, "containers"), "Required value")
    _check_unique_names(init_containers, containers, spec_path)
    resources = None
    if spec.get("resources") is not None:
        resources = parse_resource_requirements(spec["resources"], join_path(spec_path, "resources"), pod_level=True,
                                                limits=limits)

    pod = Pod(name=name, uid=uid, namespace=namespace, init_containers=init_containers,
              containers=containers, resources=resources)
    set_defaults_pod(pod, pod_level_resources=pod_level_resources)
    for key, group in (("initContainers", init_containers), ("containers", containers)):
        for i, container in enumerate(group):
            _validate_resources(container.resources, join_path(index_path(join_path(spec_path, key), i), "resources"),
                                pod_level=is_pod_level_resources_set(pod))
    if pod_level_resources and pod.resources is not None:
        _validate_resources(pod.resources, join_path(spec_path, "resources"))
        _validate_pod_resource_consistency(pod, spec_path)
    return pod


def _validate_pod_resource_consistency(pod: Pod, spec_path: str) -> None:
    """validatePodResourceConsistency (after defaulting): pod requests cover the containers' aggregate
    requests, pod hugepage limits their aggregate limits, and no app container's limit exceeds the pod's."""
    where = join_path(spec_path, "resources")
    requests, limits = pod.resources.requests, pod.resources.limits
    for name, aggregate in sorted(aggregate_container_resources(pod, "requests").items()):
        own = requests.get(name)
        if own is not None and aggregate.cmp(own) > 0:
            raise InputError(join_path(join_path(where, "requests"), name), validation.invalid(
                str(own), f"must be greater than or equal to aggregate container requests of {aggregate}"))
    for name, aggregate in sorted(aggregate_container_resources(pod, "limits").items()):
        own = limits.get(name)
        if is_hugepage_resource(name) and own is not None and aggregate.cmp(own) > 0:
            raise InputError(join_path(join_path(where, "limits"), name), validation.invalid(
                str(own), f"must be greater than or equal to aggregate container limits of {aggregate}"))
    for i, container in enumerate(pod.containers):
        for name, limit in sorted(container.resources.limits.items()):
            own = limits.get(name)
            if own is not None and limit.cmp(own) > 0:
                path = join_path(join_path(index_path(join_path(spec_path, "containers"), i), "resources.limits"), name)
                raise InputError(path, validation.invalid(str(limit), f"must be less than or equal to pod limits of {own}"))


def _string_map(value: Any, where: str) -> dict[str, str]:
    """A map of strings (Go's map[string]string): any other value type does not decode."""
    doc = expect_map(value, where)
    for key, item in doc.items():
        expect_str(item, join_path(where, key))
    return doc


def _check_labels(value: Any, where: str) -> None:
    """ValidateLabels: keys are qualified names, values valid label values."""
    for key, item in _string_map(value, where).items():
        problem = validation.qualified_name_error(key)
        if problem is not None:
            raise InputError(where, validation.invalid(key, problem))
        problem = validation.label_value_error(item)
        if problem is not None:
            raise InputError(where, validation.invalid(item, problem))


def _check_annotations(value: Any, where: str) -> None:
    """ValidateAnnotations' key rule: keys (lower-cased) are qualified names."""
    for key in _string_map(value, where):
        problem = validation.qualified_name_error(key.lower())
        if problem is not None:
            raise InputError(where, validation.invalid(key, problem))


def _validate_resources(resources: ResourceRequirements, where: str, *, pod_level: bool = False) -> None:
    """API validation of a container's resources (run after defaulting, as for static pods): quantities are
    not negative, extended resources (devices) are whole numbers, hugepage limits are multiples of the page size, a request does not exceed its limit,
    hugepage/extended requests equal their limits and have one, and hugepages come with cpu or memory."""
    for kind, resource_list in (("limits", resources.limits), ("requests", resources.requests)):
        for name, quantity in resource_list.items():
            if quantity.sign() < 0:
                raise InputError(join_path(join_path(where, kind), name),
                                 f'Invalid value: "{quantity}": must be greater than or equal to 0')
            problem = integer_resource_error(name, quantity)  # an extended resource (a device) in whole units
            if problem is not None:
                raise InputError(join_path(join_path(where, kind), name), problem)
            if kind == "limits" and is_hugepage_resource(name):
                problem = validation.hugepage_multiple_error(name, quantity)
                if problem is not None:
                    raise InputError(join_path(join_path(where, kind), name), validation.invalid(str(quantity), problem))
    for name, request in resources.requests.items():
        limit = resources.limits.get(name)
        if limit is None:
            continue
        path = join_path(join_path(where, "requests"), name)
        if request.cmp(limit) != 0 and not _is_overcommit_allowed(name):
            raise InputError(path, f'Invalid value: "{request}": must be equal to {name} limit of {limit}')
        if request.cmp(limit) > 0:
            raise InputError(path, f'Invalid value: "{request}": must be less than or equal to {name} limit of {limit}')
    for name in resources.requests:
        if name not in resources.limits and not _is_overcommit_allowed(name):
            raise InputError(join_path(join_path(where, "limits"), name),
                             "Required value: Limit must be set for non overcommitable resources")
    names = [*resources.limits, *resources.requests]
    # with pod-level resources the pod's cpu/memory bound the container (the rule is then not applied here)
    if not pod_level and any(map(is_hugepage_resource, names)) and not any(n in ("cpu", "memory") for n in names):
        raise InputError(where, "Forbidden: HugePages require cpu or memory")


def _check_unique_names(init_containers: list[Container], containers: list[Container], spec_path: str) -> None:
    """Container names must be unique across init and app containers."""
    seen: set[str] = set()
    for key, group in (("initContainers", init_containers), ("containers", containers)):
        for i, container in enumerate(group):
            if container.name in seen:
                path = join_path(index_path(join_path(spec_path, key), i), "name")
                raise InputError(path, f'Duplicate value: "{container.name}"')
            seen.add(container.name)


def load_pod_file(path: Union[str, Path], *, pod_level_resources: bool = True, limits: Limits = DEFAULT_LIMITS) -> Pod:
    """Read and parse a Pod manifest file (YAML or JSON); errors name the file and the path inside it
    (a file of several documents is an error saying how many: one pod is expected)."""
    return parse_file(path, lambda doc: parse_pod(doc, "", pod_level_resources=pod_level_resources, limits=limits),
                      limits)


def parse_pods(docs: list[Any], where: str = "", *, pod_level_resources: bool = True,
               limits: Limits = DEFAULT_LIMITS) -> list[Pod]:
    """The pods of decoded documents (a YAML stream): one per document, every item of a `kind: List`;
    empty documents are skipped."""
    pods: list[Pod] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        doc_where = index_path(where, i) if len(docs) > 1 else where
        pods.extend(parse_pod(item, item_where, pod_level_resources=pod_level_resources, limits=limits)
                    for item, item_where in pod_documents(doc, doc_where))
    return pods


def load_pod_files(path: Union[str, Path], *, pod_level_resources: bool = True,
                   limits: Limits = DEFAULT_LIMITS) -> list[Pod]:
    """Every pod of a manifest file: one per YAML document (`---` between them), the items of a
    `kind: List`, workloads' pod templates; errors name the file and the path inside it."""
    name = str(path)
    try:
        return parse_pods(load_file_documents(path, limits), pod_level_resources=pod_level_resources, limits=limits)
    except InputError as exc:
        raise exc.in_file(name) from None


# -- defaulting (SetDefaults_Pod) --------------------------------------------------------------------------
def is_hugepage_resource(name: str) -> bool:
    """`hugepages-<size>` resource names."""
    return name.startswith(HUGEPAGES_PREFIX)


# -- pod-level resources (component-helpers/resource, used by both managers) -----------------------------
POD_LEVEL_RESOURCE_NAMES = ("cpu", "memory")


def is_supported_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: pod-level `spec.resources` may set cpu, memory and hugepages-*."""
    return name in POD_LEVEL_RESOURCE_NAMES or is_hugepage_resource(name)


def is_pod_level_resources_set(pod: Pod) -> bool:
    """IsPodLevelResourcesSet: the pod's `spec.resources` requests or limits name a supported resource.

    Duck-typed: `pod.resources` is None or has `requests` and `limits` maps (either may be None).
    """
    resources = getattr(pod, "resources", None)
    if resources is None:
        return False
    requests = getattr(resources, "requests", None) or {}
    limits = getattr(resources, "limits", None) or {}
    return any(is_supported_pod_level_resource(str(name)) for name in [*requests, *limits])


def _is_overcommit_allowed(name: str) -> bool:
    """Native resources other than hugepages may be overcommitted (extended resources may not)."""
    native = "/" not in name or name.startswith("kubernetes.io/")
    return native and not is_hugepage_resource(name)


def _default_container_requests(resources: ResourceRequirements) -> None:
    """Copy each limit into requests when that resource has no request."""
    for key, value in resources.limits.items():
        resources.requests.setdefault(key, value)


def _add_into(total: dict[str, Quantity], more: dict[str, Quantity]) -> None:
    """Add every quantity of `more` into `total` (Quantity.Add)."""
    for key, value in more.items():
        total[key] = total[key].add(value) if key in total else value


def _max_into(total: dict[str, Quantity], more: dict[str, Quantity]) -> None:
    """Raise every quantity of `total` to the one in `more` when that is larger."""
    for key, value in more.items():
        if key not in total or value.cmp(total[key]) > 0:
            total[key] = value


def aggregate_container_resources(pod: Pod, kind: str) -> dict[str, Quantity]:
    """The effective pod need from containers (`kind` "requests" or "limits"), as component-helpers computes it:
    max(sum of app containers and sidecars, each init container plus the sidecars started before it)."""
    total: dict[str, Quantity] = {}
    for container in pod.containers:
        _add_into(total, getattr(container.resources, kind))
    sidecars: dict[str, Quantity] = {}
    init_peak: dict[str, Quantity] = {}
    for container in pod.init_containers:
        own = getattr(container.resources, kind)
        if container.is_restartable:
            _add_into(total, own)
            _add_into(sidecars, own)
            running = dict(sidecars)
        else:
            running = {}
            _add_into(running, own)
            _add_into(running, sidecars)
        _max_into(init_peak, running)
    _max_into(total, init_peak)
    return total


def _default_hugepage_pod_limits(pod: Pod) -> None:
    """Pod-level hugepage limits default to the containers' aggregated limits."""
    resources = pod.resources
    if resources is None or (not resources.limits and not resources.requests):
        return
    for key, value in aggregate_container_resources(pod, "limits").items():
        if not is_supported_pod_level_resource(key) or not is_hugepage_resource(key):
            continue
        if key in resources.requests:
            continue
        resources.limits.setdefault(key, value)


def _default_pod_requests(pod: Pod) -> None:
    """Pod-level requests default to the containers' aggregated requests, else to pod limits."""
    resources = pod.resources
    if resources is None or not resources.limits:
        return
    requests = dict(resources.requests)
    for key, value in aggregate_container_resources(pod, "requests").items():
        if key not in requests and is_supported_pod_level_resource(key) and _is_overcommit_allowed(key):
            requests[key] = value
    for key, value in resources.limits.items():
        if key not in requests and is_supported_pod_level_resource(key):
            requests[key] = value
    if requests:
        resources.requests = requests


def set_defaults_pod(pod: Pod, *, pod_level_resources: bool = True) -> None:
    """SetDefaults_Pod's resource rules, in place: limits copied into missing requests of every container
    and init container; then, with PodLevelResources, pod-level hugepage limits and pod-level requests."""
    for container in pod.all_containers():
        _default_container_requests(container.resources)
    if pod_level_resources:
        _default_hugepage_pod_limits(pod)
        _default_pod_requests(pod)

