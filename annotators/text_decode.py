"""Decode raw bytes of one record: UTF-8 first, then the legacy Chinese/Western encodings.

Known-bad inputs guarded against: a UTF-8 BOM, GBK/GB18030 or Big5 lines in a UTF-8 file,
cp1252 smart quotes, and binary junk (reported as `undecodable`).
"""
from __future__ import annotations

from annotators.outcome import Drop

LEGACY = ("gb18030", "big5", "cp1252")


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:4096]


def decode_bytes(data: bytes, legacy: tuple[str, ...] = LEGACY) -> tuple[str, str] | Drop:
    """(text, encoding) for `data`, or Drop("undecodable")."""
    if _looks_binary(data):
        return Drop("undecodable", "NUL bytes: binary data")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data, cp_isolation=list(legacy)).best()
    if best is not None:
        return str(best), best.encoding
    for enc in legacy:
        try:
            return data.decode(enc), enc
        except UnicodeDecodeError:
            continue
    return Drop("undecodable", f"not UTF-8 nor {', '.join(legacy)}")
