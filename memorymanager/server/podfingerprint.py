"""The pod-set fingerprint NFD's topology-updater publishes as the NRT attribute
`nodeTopologyPodsFingerprint` (the k8stopologyawareschedwg/podfingerprint library, signature
`pfp0` + `v001`), which scheduler-plugins compares with the pods it believes are on the node.

The algorithm, reproduced exactly (docs/nrt.md says what was checked against the library):

- each pod, identified by namespace and name only, hashes to one 64-bit XXH64 value: the
  name hashed with, as seed, the XXH64 of the namespace (seed 0);
- the set's sum is the XXH64 (seed 0) of those values sorted ascending, each written as 8
  little-endian bytes, one after the other;
- the signature is `pfp0v001` followed by that sum as 16 lowercase hex digits (big-endian).

The same set gives the same signature whatever the order the pods are added in; a pod added
twice counts twice (the library keeps a list, not a set).

>>> sign([])
'pfp0v001ef46db3751d8e999'
>>> sign([("default", "a"), ("kube-system", "b")]) == sign([("kube-system", "b"), ("default", "a")])
True
"""
from __future__ import annotations

import struct
from typing import Iterable

PREFIX = "pfp0"
VERSION = "v001"
ATTRIBUTE = "nodeTopologyPodsFingerprint"

_MASK = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _round(acc: int, lane: int) -> int:
    """One accumulator step of XXH64: add the lane times P2, rotate 31, times P1."""
    return (_rotl((acc + lane * _P2) & _MASK, 31) * _P1) & _MASK


def _merge(acc: int, value: int) -> int:
    """Fold one of the four stripe accumulators into the hash (inputs of 32 bytes and more)."""
    return ((acc ^ _round(0, value)) * _P1 + _P4) & _MASK


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of `data` with a 64-bit `seed` (Yann Collet's xxHash, 64-bit variant).

    >>> hex(xxh64(b""))
    '0xef46db3751d8e999'
    >>> hex(xxh64(b"abc"))
    '0x44bc2cf5ad770999'
    """
    seed &= _MASK
    length = len(data)
    offset = 0
    if length >= 32:
        v1 = (seed + _P1 + _P2) & _MASK
        v2 = (seed + _P2) & _MASK
        v3 = seed
        v4 = (seed - _P1) & _MASK
        stripes = length - length % 32
        while offset < stripes:
            a, b, c, d = struct.unpack_from("<4Q", data, offset)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            offset += 32
        acc = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
        for v in (v1, v2, v3, v4):
            acc = _merge(acc, v)
    else:
        acc = (seed + _P5) & _MASK
    acc = (acc + length) & _MASK
    while offset + 8 <= length:
        (lane,) = struct.unpack_from("<Q", data, offset)
        acc = (_rotl(acc ^ _round(0, lane), 27) * _P1 + _P4) & _MASK
        offset += 8
    if offset + 4 <= length:
        (word,) = struct.unpack_from("<I", data, offset)
        acc = (_rotl(acc ^ ((word * _P1) & _MASK), 23) * _P2 + _P3) & _MASK
        offset += 4
    while offset < length:
        acc = (_rotl(acc ^ ((data[offset] * _P5) & _MASK), 11) * _P1) & _MASK
        offset += 1
    acc ^= acc >> 33
    acc = (acc * _P2) & _MASK
    acc ^= acc >> 29
    acc = (acc * _P3) & _MASK
    acc ^= acc >> 32
    return acc


def pod_hash(namespace: str, name: str) -> int:
    """One pod's value: its name hashed with the hash of its namespace as seed."""
    return xxh64(name.encode("utf-8"), xxh64(namespace.encode("utf-8")))


class Fingerprint:
    """A pod set being fingerprinted (the library's `Fingerprint`): add pods, then `sign()`."""

    def __init__(self) -> None:
        self._hashes: list[int] = []

    def add(self, namespace: str, name: str) -> None:
        """Add one pod by namespace and name."""
        self._hashes.append(pod_hash(namespace, name))

    def sum(self) -> bytes:
        """The 8 bytes of the set's hash (big-endian, as Go's `hash.Sum`)."""
        return sum_of_hashes(self._hashes)

    def sign(self) -> str:
        """`pfp0v001` and the sum in hex."""
        return PREFIX + VERSION + self.sum().hex()


def sum_of_hashes(hashes: Iterable[int]) -> bytes:
    """The 8 bytes of the hash of a set of pods given by their `pod_hash` values (for callers that
    keep a changing set's values, computing each pod's once)."""
    body = b"".join(struct.pack("<Q", h) for h in sorted(hashes))
    return struct.pack(">Q", xxh64(body))


def sign_hashes(hashes: Iterable[int]) -> str:
    """The signature of a set of pods given by their `pod_hash` values."""
    return PREFIX + VERSION + sum_of_hashes(hashes).hex()


def sign(pods: Iterable[tuple[str, str]]) -> str:
    """The signature of (namespace, name) pairs."""
    fingerprint = Fingerprint()
    for namespace, name in pods:
        fingerprint.add(namespace, name)
    return fingerprint.sign()
