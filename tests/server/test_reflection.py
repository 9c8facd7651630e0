"""gRPC server reflection on the serve socket: a client that has no .proto file lists the three
services, learns their descriptors from the server and calls them with messages it builds from
those descriptors alone (what grpcurl does), over the real unix socket."""
from __future__ import annotations

import grpc
from google.protobuf import descriptor_pool
from google.protobuf.message_factory import GetMessageClass
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from tests.server.serving import pod, serving

SERVICES = ["memorymanager.v1alpha1.NodeControl", "v1.PodResourcesLister", "v1alpha1.PodResourcesLister"]
REFLECTION = "grpc.reflection.v1alpha.ServerReflection"


def test_reflection_lists_the_three_services(tmp_path):
    with serving(tmp_path) as (server, _):
        with grpc.insecure_channel("unix:" + server.socket_path) as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            answers = list(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                                                     timeout=10))
    names = sorted(s.name for s in answers[0].list_services_response.service)
    assert names == sorted(SERVICES + [REFLECTION])


def test_a_client_without_protos_calls_the_services_from_reflected_descriptors(tmp_path):
    with serving(tmp_path) as (server, c):
        assert c.admit(pod("web", memory="2Gi")).admitted
        with grpc.insecure_channel("unix:" + server.socket_path) as channel:
            database = ProtoReflectionDescriptorDatabase(channel)
            pool = descriptor_pool.DescriptorPool(database)  # a fresh pool: nothing generated is used
            assert sorted(database.get_services()) == sorted(SERVICES + [REFLECTION])

            lister = pool.FindServiceByName("v1.PodResourcesLister")
            assert [m.name for m in lister.methods] == ["List", "GetAllocatableResources", "Get"]
            get = lister.methods_by_name["Get"]
            request_class = GetMessageClass(get.input_type)
            response_class = GetMessageClass(get.output_type)
            call = channel.unary_unary("/v1.PodResourcesLister/Get", request_serializer=request_class.SerializeToString,
                                       response_deserializer=response_class.FromString)
            answer = call(request_class(pod_name="web", pod_namespace="default"), timeout=10)
            block = answer.pod_resources.containers[0].memory[0]
            assert (answer.pod_resources.name, block.memory_type, block.size) == ("web", "memory", 2 << 30)

            control = pool.FindServiceByName("memorymanager.v1alpha1.NodeControl")
            list_pods = control.methods_by_name["ListPods"]
            call = channel.unary_unary("/memorymanager.v1alpha1.NodeControl/ListPods",
                                       request_serializer=GetMessageClass(list_pods.input_type).SerializeToString,
                                       response_deserializer=GetMessageClass(list_pods.output_type).FromString)
            assert [p.name for p in call(GetMessageClass(list_pods.input_type)(), timeout=10).pods] == ["web"]
            assert control.file.GetOptions().go_package == "memorymanager/nodecontrol/v1alpha1"
