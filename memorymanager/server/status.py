"""gRPC status texts that always fit the wire: a status message travels in the `grpc-message`
trailer, percent-encoded (up to three bytes per byte), and a client drops a trailer past 8 KiB
with `RESOURCE_EXHAUSTED Stream removed` instead of the status the server meant. Every status
message of `serve` goes through `status_message`: at most MAX_STATUS_MESSAGE_BYTES of UTF-8,
characters UTF-8 cannot carry (lone surrogates) written as backslash escapes.
"""
from __future__ import annotations

# 2 KiB of UTF-8 is at most 6 KiB percent-encoded: below the 8 KiB a gRPC client accepts.
MAX_STATUS_MESSAGE_BYTES = 2048


def status_message(text: str) -> str:
    """`text` as a status message: as it is when short, else cut with how long it was."""
    data = text.encode("utf-8", "backslashreplace")
    if len(data) <= MAX_STATUS_MESSAGE_BYTES:
        return data.decode("utf-8")
    kept = data[:MAX_STATUS_MESSAGE_BYTES - 64].decode("utf-8", "ignore")
    return f"{kept}...(message cut: {len(data):,} bytes)"
