"""The node's APIs on top of `memorymanager.Node`: kubelet's PodResources gRPC API, the
node-control service, Prometheus metrics and the NodeResourceTopology view (docs/grpc.md,
docs/nrt.md). `memorymanager serve` puts them on a unix socket."""

# kubelet's PodResources socket: <root-dir>/pod-resources/kubelet.sock
DEFAULT_SOCKET = "/var/lib/kubelet/pod-resources/kubelet.sock"
