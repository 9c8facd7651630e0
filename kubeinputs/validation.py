"""The API server's rules for the Pod fields the resource managers read, with its messages.

A Pod reaches kubelet only after the API server validated it (or, for a static pod, after kubelet
ran the same validation), so a manifest the API server refuses never meets the memory manager. The
readers here refuse it the same way, before any manager sees it: the message is the API server's
field error text (`Invalid value: "App": a lowercase RFC 1123 label must consist of ...`), the path
is the field's path in the file.

Rules (pkg/apis/core/validation and apimachinery's util/validation):

- container names are DNS-1123 labels; pod names DNS-1123 subdomains; namespaces DNS-1123 labels;
- resource names are qualified names; an unprefixed one must be a standard container resource
  (`cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>`); a prefixed one outside
  `kubernetes.io/` must follow the extended-resource standard;
- hugepage quantities are positive multiples of the page size; hugepages need a cpu or memory
  request or limit; extended resources and hugepages need a limit when requested;
- label keys are qualified names and label values valid label values; annotation keys are
  qualified names (labels and annotations are maps of strings: other values do not decode);
- pod-level `spec.resources` are not negative, requests do not exceed limits, pod requests cover the
  containers' aggregate requests, pod hugepage limits their aggregate limits, and no app
  container's limit exceeds the pod's (validatePodResources, validatePodResourceConsistency).

The first failing rule of a field is reported (the API server lists them all).
"""
from __future__ import annotations

import math
import re
from typing import Optional

from kubeinputs.errors import MAX_ECHO_CHARS

# -- apimachinery's util/validation texts -------------------------------------------------------------------
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_RE = re.compile(_LABEL_FMT)
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character")
_SUBDOMAIN_FMT = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN_FMT)
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(_QNAME_FMT)
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', "
              "and must start and end with an alphanumeric character")
LABEL_VALUE_MAX = 63
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError text: the message, the examples and the regular expression."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """apimachinery's MaxLenError text."""
    return f"must be no more than {length} characters"


def _full(regex: re.Pattern, value: str) -> bool:
    # Go's `^...$` does not match before a trailing newline the way Python's `$` does
    return regex.fullmatch(value) is not None


def dns1123_label_error(value: str) -> Optional[str]:
    """IsDNS1123Label's first message, or None for a valid label."""
    if len(value) > DNS1123_LABEL_MAX:
        return max_len_error(DNS1123_LABEL_MAX)
    if not _full(_LABEL_RE, value):
        return regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc")
    return None


def dns1123_subdomain_error(value: str) -> Optional[str]:
    """IsDNS1123Subdomain's first message, or None."""
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        return max_len_error(DNS1123_SUBDOMAIN_MAX)
    if not _full(_SUBDOMAIN_RE, value):
        return regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com")
    return None


def qualified_name_error(value: str) -> Optional[str]:
    """IsQualifiedName's first message (`[prefix/]name`), or None."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return "prefix part must be non-empty"
        problem = dns1123_subdomain_error(prefix)
        if problem is not None:
            return "prefix part " + problem
    else:
        return ("a qualified name " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
    if not name:
        return "name part must be non-empty"
    if len(name) > QUALIFIED_NAME_MAX:
        return "name part " + max_len_error(QUALIFIED_NAME_MAX)
    if not _full(_QNAME_RE, name):
        return "name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
    return None


def label_value_error(value: str) -> Optional[str]:
    """IsValidLabelValue's first message, or None."""
    if len(value) > LABEL_VALUE_MAX:
        return max_len_error(LABEL_VALUE_MAX)
    if not _full(_LABEL_VALUE_RE, value):
        return regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
    return None


def invalid(value: object, reason: str) -> str:
    """A field.Invalid text: `Invalid value: "x": reason` (strings quoted as Go's %q would)."""
    from kubeinputs.goformat import go_quote

    if isinstance(value, str) and len(value) > MAX_ECHO_CHARS:  # a huge value is cut, not echoed whole
        shown = f"{go_quote(value[:MAX_ECHO_CHARS])}...({len(value):,} characters)"
    else:
        shown = go_quote(value) if isinstance(value, str) else str(value)
    return f"Invalid value: {shown}: {reason}"


# -- resource names (pkg/apis/core/helper) ------------------------------------------------------------------
HUGEPAGES_PREFIX = "hugepages-"
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
    "resourcequotas", "secrets", "persistentvolumeclaims", "configmaps", "services.nodeports",
    "services.loadbalancers", "requests.storage",
})


def is_hugepage_name(name: str) -> bool:
    """`hugepages-<size>`."""
    return name.startswith(HUGEPAGES_PREFIX)


def is_native_resource(name: str) -> bool:
    """No prefix, or a `kubernetes.io/` one."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """A prefixed, non-native name that stays a qualified name under `requests.`."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return qualified_name_error("requests." + name) is None


def container_resource_name_error(name: str) -> Optional[str]:
    """validateContainerResourceName's first message for a resource name of a container, or None."""
    problem = qualified_name_error(name)
    if problem is not None:
        return problem
    if "/" not in name:
        if name not in _STANDARD_RESOURCES and not is_hugepage_name(name) and not name.startswith("requests.hugepages-"):
            return "must be a standard resource type or fully qualified"
        if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepage_name(name):
            return "must be a standard resource for containers"
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        return "doesn't follow extended resource name standard"
    return None


def pod_resource_name_error(name: str) -> Optional[str]:
    """Pod-level `spec.resources` names: a valid resource name that is cpu, memory or hugepages-*."""
    problem = qualified_name_error(name)
    if problem is None and "/" not in name and name not in _STANDARD_RESOURCES and not is_hugepage_name(name):
        problem = "must be a standard resource type or fully qualified"
    if problem is not None:
        return problem
    if name not in ("cpu", "memory") and not is_hugepage_name(name):
        return 'Unsupported value: supported values: "cpu", "hugepages-", "memory"'
    return None


def hugepage_multiple_error(name: str, quantity) -> Optional[str]:
    """validateResourceQuantityHugePageValue: the quantity is a positive integer multiple of the page size."""
    from kubeinputs.quantity import QuantityError, parse_quantity

    try:
        page = parse_quantity(name[len(HUGEPAGES_PREFIX):])
    except QuantityError:
        page = None
    text = f"{quantity} is not positive integer multiple of {name}"
    size = None if page is None or page.sign() <= 0 else page.try_as_int64()
    if size is None or page.value != size:
        return text
    # Quantity.Value() (rounded up) modulo the page size, without building 10^exp10 (1e999999999 is a
    # valid quantity)
    if quantity.exp10 >= 0:
        remainder = (quantity.unscaled % size) * pow(10, quantity.exp10, size) % size
    else:
        remainder = math.ceil(quantity.value) % size
    return text if remainder else None
