"""Regenerate the Python gRPC code of the server's .proto files with grpcio-tools.

    python -m memorymanager.server.generate          # rewrite the *_pb2.py / *_pb2_grpc.py files
    python -m memorymanager.server.generate --check  # exit 1 when the committed files differ

The protos are compiled from the repository root so that the generated modules import
each other as `memorymanager.server.protos....`; the proto *package* names (`v1`,
`v1alpha1`, `memorymanager.v1alpha1`) are what goes on the wire.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

PROTOS = (
    "memorymanager/server/protos/v1/api.proto",
    "memorymanager/server/protos/v1alpha1/api.proto",
    "memorymanager/server/protos/control/control.proto",
)
ROOT = Path(__file__).resolve().parents[2]


def generated_names(proto: str) -> list[str]:
    """The two files grpcio-tools writes for one proto."""
    stem = proto[: -len(".proto")]
    return [stem + "_pb2.py", stem + "_pb2_grpc.py"]


def generate(out_dir: Path) -> None:
    """Compile every proto into `out_dir` (same relative layout as the sources)."""
    from grpc_tools import protoc  # grpcio-tools: a test/development dependency only

    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    for proto in PROTOS:
        code = protoc.main(
            ["grpc_tools.protoc", f"-I{ROOT}", f"-I{include}", f"--python_out={out_dir}",
             f"--grpc_python_out={out_dir}", str(ROOT / proto)]
        )
        if code != 0:
            raise RuntimeError(f"protoc failed on {proto} (exit {code})")


def differences() -> list[str]:
    """The generated files whose committed bytes differ from a fresh generation."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        changed = []
        for proto in PROTOS:
            for name in generated_names(proto):
                fresh = (Path(tmp) / name).read_bytes()
                committed = ROOT / name
                if not committed.exists() or committed.read_bytes() != fresh:
                    changed.append(name)
        return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only compare with the committed files")
    args = parser.parse_args(argv)
    if args.check:
        changed = differences()
        for name in changed:
            print(f"differs: {name}")
        return 1 if changed else 0
    generate(ROOT)
    for proto in PROTOS:
        for name in generated_names(proto):
            print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
