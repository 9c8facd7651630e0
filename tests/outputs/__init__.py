"""Byte-for-byte snapshots of what `memorymanager run` prints and writes, to compare two versions."""
