"""Small derived tables (token costs of a vocabulary, say) cached on disk, so a cold process does not rebuild them.

Where: ``tables/`` in the lurch-tasks cache folder (``$LURCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/lurch-tasks``, else
``~/.cache/lurch-tasks``; ``LURCH_CACHE_DIR=off`` switches every cache off). One file per table and content key: the
key names everything the table is derived from (the tokenizer's data by hash, the source files by hash, the code's
version), so a changed input reads another file and never a stale one.

A file is trusted only if it is whole and ours: a magic line, then an HMAC-SHA256 (under the per-user key the doc
cache uses, kept outside the cache folder) over a JSON header and the raw array bytes. The header repeats the key and
gives each array's dtype (from a short allow-list) and shape; arrays are read with ``numpy.frombuffer``: no pickle, no
code runs. Anything else (missing, truncated, edited, another key, an unreadable folder) is ignored and the table is
built in memory; saving writes a temporary file beside the entry and renames it over it (readers never see part of a
file, concurrent writers each write a whole one), and a folder that cannot be written costs nothing but the saving.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path

import numpy as np

from .files import atomic_output

CACHE_ENV = "LURCH_CACHE_DIR"
DISABLED = "off"
KEY_FILE = "doc-cache.key"
KEY_BYTES = 32
MAGIC = b"lurch-table 1\n"
_DTYPES = ("<i8", "<i4", "<u1", "|u1", "<f8")  # what tables may hold (numpy spells bytes "|u1"); nothing else
_MAX_HEADER = 1 << 16


def cache_root(environ: Mapping[str, str] | None = None) -> Path | None:
    """The cache folder, or None when ``LURCH_CACHE_DIR=off``."""
    env = os.environ if environ is None else environ
    value = env.get(CACHE_ENV, "").strip()
    if value.lower() == DISABLED:
        return None
    if value:
        return Path(value).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"  # XDG: relative is ignored
    return base / "lurch-tasks"


def key_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the per-user MAC key lives: the config folder, never the cache folder (which others may share)."""
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CONFIG_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    return base / "lurch-tasks" / KEY_FILE


def mac_key(path: Path | None = None) -> bytes:
    """The per-user secret MAC key (created on first use: 32 random bytes, mode 0600); a ValueError naming the file
    when it cannot be made or read, or when another user could read or replace it."""
    path = key_path() if path is None else path
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(handle, "wb") as out:
                out.write(secrets.token_bytes(KEY_BYTES))
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(handle, "rb") as source:
            info = os.fstat(source.fileno())
            key = source.read(KEY_BYTES + 1)
    except OSError as err:
        raise ValueError(f"{path}: cannot be used as the doc cache key ({_reason(err)})") from None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ValueError(f"{path}: the doc cache key must be a file of this user that no one else may read or write "
                         "(mode 0600)")
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path}: the doc cache key must hold {KEY_BYTES} bytes; allowed: delete it (a new one is "
                         "made)")
    return key


def _reason(err: BaseException) -> str:
    text = " ".join(str(err).split())[:160]
    return text or type(err).__name__


@cache
def _table_secret() -> bytes | None:
    """The per-user MAC key, or None when it cannot be used (then tables are only ever built in memory)."""
    try:
        return mac_key()
    except ValueError:
        return None


def tables_enabled() -> bool:
    """Whether tables can be cached at all (a cache folder and a usable MAC key)."""
    return cache_root() is not None and _table_secret() is not None


def table_path(root: Path, name: str, key: Mapping[str, object]) -> Path:
    digest = hashlib.sha256(_key_json(name, key).encode("utf-8")).hexdigest()[:32]
    return root / "tables" / f"{name}-{digest}.bin"


def _key_json(name: str, key: Mapping[str, object]) -> str:
    return json.dumps({"table": name, **key}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def encode_table(secret: bytes, name: str, key: Mapping[str, object], arrays: Mapping[str, np.ndarray]) -> bytes:
    """The file bytes of a table: magic, MAC, header length, header, array bytes."""
    parts, fields = [], []
    for field, array in arrays.items():
        array = np.ascontiguousarray(array)
        dtype = array.dtype.newbyteorder("<").str if array.dtype.byteorder != "|" else array.dtype.str
        if dtype not in _DTYPES:
            raise ValueError(f"table {name}: dtype {array.dtype} of {field!r} is not allowed; allowed: {_DTYPES}")
        parts.append(array.astype(dtype, copy=False).tobytes())
        fields.append({"name": field, "dtype": dtype, "shape": list(array.shape)})
    header = json.dumps({"key": _key_json(name, key), "arrays": fields}, separators=(",", ":")).encode("ascii")
    body = len(header).to_bytes(4, "little") + header + b"".join(parts)
    return MAGIC + hmac.new(secret, body, hashlib.sha256).digest() + body


def decode_table(secret: bytes, name: str, key: Mapping[str, object], data: bytes) -> dict[str, np.ndarray]:
    """The arrays of a table file; ValueError for anything but a whole, unedited file of this key."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 36:
        raise ValueError("not a table file")
    mac, body = data[len(MAGIC):len(MAGIC) + 32], data[len(MAGIC) + 32:]
    if not hmac.compare_digest(mac, hmac.new(secret, body, hashlib.sha256).digest()):
        raise ValueError("MAC mismatch")
    size = int.from_bytes(body[:4], "little")
    if size > _MAX_HEADER or 4 + size > len(body):
        raise ValueError("bad header length")
    header = json.loads(body[4:4 + size])
    if header.get("key") != _key_json(name, key):
        raise ValueError("another key")
    arrays, offset = {}, 4 + size
    for field in header["arrays"]:
        dtype, shape = field["dtype"], tuple(field["shape"])
        if dtype not in _DTYPES or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ValueError("bad array field")
        count = int(np.prod(shape, dtype=np.int64))
        nbytes = count * np.dtype(dtype).itemsize
        if offset + nbytes > len(body):
            raise ValueError("truncated")
        arrays[field["name"]] = np.frombuffer(body, dtype=dtype, count=count, offset=offset).reshape(shape)
        offset += nbytes
    if offset != len(body):
        raise ValueError("trailing bytes")
    return arrays


def cached_table(name: str, key: Mapping[str, object], build: Callable[[], dict[str, np.ndarray]],
                 root: Path | None | bool = True) -> dict[str, np.ndarray]:
    """The arrays ``build()`` returns for ``key``, read from the cache when a valid file is there, else built and
    saved (best effort). ``root``: the cache folder, None for none, True for ``cache_root()``. Arrays read back are
    read-only."""
    found = read_table(name, key, root)
    if found is not None:
        return found
    arrays = build()
    write_table(name, key, arrays, root)
    return arrays


def tokenizer_table(name: str, table_stamp: str | None, key: Mapping[str, object],
                    build: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """``cached_table`` of a table derived from a tokenizer, under its content key (``TokenCounter.table_stamp``)
    beside ``key``; built in memory for a tokenizer without one (a slow Hugging Face tokenizer)."""
    if table_stamp is None:
        return build()
    return cached_table(name, {**key, "tokenizer": table_stamp}, build)


def read_table(name: str, key: Mapping[str, object], root: Path | None | bool = True) -> dict[str, np.ndarray] | None:
    """The arrays of a valid cached table of ``key``, else None (no cache, missing, unreadable, not ours)."""
    folder = cache_root() if root is True else root
    secret = None if folder is None else _table_secret()
    if folder is None or secret is None:
        return None
    try:
        return decode_table(secret, name, key, table_path(folder, name, key).read_bytes())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_table(name: str, key: Mapping[str, object], arrays: Mapping[str, np.ndarray],
                root: Path | None | bool = True) -> None:
    """Save a table (best effort: a read-only or full cache folder loses only the saving)."""
    folder = cache_root() if root is True else root
    secret = None if folder is None else _table_secret()
    if folder is None or secret is None:
        return
    path = table_path(folder, name, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(path, binary=True) as out:
            out.write(encode_table(secret, name, key, arrays))
    except OSError:
        pass


def file_stamp(*paths: Path) -> str:
    """SHA-256 over files' names and bytes: part of a table key, so an edited source never reads a stale table."""
    digest = hashlib.sha256()
    for path in paths:
        data = path.read_bytes()
        digest.update(path.name.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0" + data)
    return digest.hexdigest()
