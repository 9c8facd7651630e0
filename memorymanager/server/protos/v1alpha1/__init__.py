"""Generated gRPC code of the PodResources and node-control protos."""
