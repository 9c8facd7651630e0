"""Kubernetes and Go inputs: the semantics every layer above shares.

The bottom layer of the project. Nothing here knows of a manager or a policy:
quantities (`quantity`), v1 Pod manifests (`pod`), QoS classes (`qos`), feature gates with
their v1.37 defaults (`features`), cadvisor machine info and sysfs (`machine`, `sysfs`), the
KubeletConfiguration (`kubelet_config`), Go formatting and quoting (`goformat`), Go's JSON
and the go-spew checksum (`gojson`, `gotypes`, `checksum`), and the one strict input reader
with its error type (`reader`, `errors`).
"""
