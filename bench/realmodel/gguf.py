"""A minimal GGUF header reader: the key/value metadata, without loading any tensor.

Only what the bench needs (architecture, name, context length, chat template) is
looked at; large arrays (the vocabulary) are skipped, not kept.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

GGUF_MAGIC = b"GGUF"

# GGUF value types -> struct format (scalars only)
_SCALARS: dict[int, str] = {
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
    10: "<Q", 11: "<q", 12: "<d",
}
_STRING = 8
_ARRAY = 9
# arrays longer than this are skipped and reported by their length only
_MAX_ARRAY_KEPT = 64


class GGUFError(ValueError):
    """The file is not a GGUF file this reader understands."""


def _read(f: BinaryIO, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise GGUFError("truncated GGUF header")
    return data


def _scalar(f: BinaryIO, vtype: int) -> object:
    fmt = _SCALARS[vtype]
    return struct.unpack(fmt, _read(f, struct.calcsize(fmt)))[0]


def _string(f: BinaryIO) -> str:
    (n,) = struct.unpack("<Q", _read(f, 8))
    return _read(f, n).decode("utf-8", errors="replace")


def _skip_string(f: BinaryIO) -> None:
    (n,) = struct.unpack("<Q", _read(f, 8))
    f.seek(n, 1)


def _value(f: BinaryIO, vtype: int) -> object:
    if vtype in _SCALARS:
        return _scalar(f, vtype)
    if vtype == _STRING:
        return _string(f)
    if vtype == _ARRAY:
        (itype,) = struct.unpack("<I", _read(f, 4))
        (count,) = struct.unpack("<Q", _read(f, 8))
        if count > _MAX_ARRAY_KEPT:
            if itype == _STRING:
                for _ in range(count):
                    _skip_string(f)
            elif itype in _SCALARS:
                f.seek(count * struct.calcsize(_SCALARS[itype]), 1)
            else:
                for _ in range(count):
                    _value(f, itype)
            return f"<array of {count}>"
        return [_value(f, itype) for _ in range(count)]
    raise GGUFError(f"unknown GGUF value type {vtype}")


def read_metadata(path: str | Path) -> dict[str, object]:
    """Return the GGUF key/value metadata of ``path`` (long arrays replaced by a summary)."""
    with open(path, "rb") as f:
        if f.read(4) != GGUF_MAGIC:
            raise GGUFError(f"{path}: not a GGUF file (bad magic)")
        version, _n_tensors, n_kv = struct.unpack("<IQQ", _read(f, 20))
        if version < 2:
            raise GGUFError(f"{path}: GGUF version {version} is not supported")
        meta: dict[str, object] = {"GGUF.version": version}
        for _ in range(n_kv):
            key = _string(f)
            (vtype,) = struct.unpack("<I", _read(f, 4))
            meta[key] = _value(f, vtype)
        return meta


def summary(meta: dict[str, object]) -> dict[str, object]:
    """The few fields the bench relies on: architecture, name, context length, template."""
    arch = str(meta.get("general.architecture", ""))
    template = meta.get("tokenizer.chat_template")
    return {
        "general.architecture": arch,
        "general.name": meta.get("general.name"),
        "general.file_type": meta.get("general.file_type"),
        f"{arch}.context_length": meta.get(f"{arch}.context_length"),
        f"{arch}.block_count": meta.get(f"{arch}.block_count"),
        "tokenizer.ggml.model": meta.get("tokenizer.ggml.model"),
        "tokenizer.chat_template": (
            f"<{len(template)} chars>" if isinstance(template, str) else None
        ),
        "template has tools": isinstance(template, str) and "tools" in template,
        "template has <tool_call>": isinstance(template, str) and "<tool_call>" in template,
    }
