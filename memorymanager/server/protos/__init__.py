"""The .proto files of the served APIs and their grpcio-tools code (`generate.py` regenerates it)."""
