"""The pod-set fingerprint: XXH64 against published values, a signature published by the
podfingerprint library's compatibility data, and the set properties the library promises."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memorymanager.server.podfingerprint import ATTRIBUTE, Fingerprint, pod_hash, sign, xxh64


def test_xxh64_published_values():
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"a") == 0xD24EC4F1A98C6E5B
    assert xxh64(b"abc") == 0x44BC2CF5AD770999
    assert xxh64(b"Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1  # 39 bytes: the stripe path


def test_a_signature_of_the_librarys_compatibility_data():
    # three pods of podfingerprint's `compat-tiny-3pods-1ns` case and the signature it records
    pods = [("production", "jaeger-dpgjk"), ("production", "nginx-rt684"), ("production", "envoy-g9m22")]
    assert sign(pods) == "pfp0v001607b76a0e9d3aeb4"


def test_the_namespace_seeds_the_name():
    assert pod_hash("default", "web") == xxh64(b"web", xxh64(b"default"))
    assert pod_hash("a", "bc") != pod_hash("ab", "c")  # not a hash of the joined text
    assert ATTRIBUTE == "nodeTopologyPodsFingerprint"


names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=40)
pods = st.lists(st.tuples(names, names), max_size=30)


@settings(max_examples=60, deadline=None)
@given(pods, st.randoms(use_true_random=False))
def test_the_order_of_the_pods_does_not_matter(pairs, rng):
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    assert sign(pairs) == sign(shuffled)
    fingerprint = Fingerprint()
    for namespace, name in shuffled:
        fingerprint.add(namespace, name)
    assert fingerprint.sign() == sign(pairs)
    assert len(fingerprint.sign()) == len("pfp0v001") + 16


@settings(max_examples=40, deadline=None)
@given(pods, st.tuples(names, names))
def test_adding_a_pod_changes_the_signature(pairs, extra):
    assert sign(pairs + [extra]) != sign(pairs)  # even a pod already there: the library keeps a list

