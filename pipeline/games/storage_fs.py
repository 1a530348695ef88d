"""Where a run's files live: one pathlib-like handle over pyarrow's filesystem layer.

A :class:`StorePath` is a filesystem (from ``pyarrow.fs.FileSystem.from_uri``) and a path on it:
a local folder, or any store pyarrow reaches by URI (``s3://bucket/runs``, ``gs://bucket/runs``,
``hdfs://host/runs``). Everything that reads or writes a run folder (batch Parquet files, their
checksum records, manifests and result JSON, resume scans, the report) goes through it, so the
driver writes an object store exactly as it writes a disk.

Writes replace whole files and are atomic for readers. Where the store can rename (a local disk,
HDFS) the bytes go to a hidden temp file beside the target (``.NAME.<pid>.tmp``; fsynced on a
local disk), which is then renamed over it. Where it cannot (object stores) they go up in one
whole-object PUT (``allow_delayed_open`` lets pyarrow send a small file as a single PutObject),
which a reader sees entirely or not at all. Either way a retried write replaces its own file.

Store options ride in the URI's query (``s3://bucket/runs?endpoint_override=HOST:PORT&scheme=http``)
and are left out when a path is printed; credentials come from the environment
(``AWS_ACCESS_KEY_ID``, ``GOOGLE_APPLICATION_CREDENTIALS``, ...), never from the URI.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import posixpath
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

#: filesystems whose move is an atomic rename (pyarrow's ``type_name``)
RENAMING = ("local", "hdfs")


class StoreError(ValueError):
    """A location pyarrow cannot open; the message names it (without its query)."""


@dataclass(frozen=True, eq=False)
class StorePath:
    """A path on a pyarrow filesystem; ``str()`` gives it as the user wrote it (a local path or a URI)."""

    fs: Any  # pyarrow.fs.FileSystem
    path: str  # the filesystem's own path: "/abs/dir" locally, "bucket/key" on S3
    scheme: str = ""  # "" for a local path, else the URI scheme (s3, gs, hdfs, ...)
    query: str = ""  # the URI's query: store options, kept for uri, never printed

    # -- names -----------------------------------------------------------------------------

    def __str__(self) -> str:
        return self.path if not self.scheme else f"{self.scheme}://{self.path}"

    def __repr__(self) -> str:
        return f"StorePath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        """Equal to a StorePath of the same place, and (when local) to the same ``pathlib`` path."""
        if isinstance(other, PurePath):
            return self.is_local and Path(self.path) == other
        return isinstance(other, StorePath) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(Path(self.path)) if self.is_local else hash(self._key())

    def __fspath__(self) -> str:
        """The local path, so local-only code (``open``, ``Path(...)``) takes it; TypeError remotely."""
        if not self.is_local:
            raise TypeError(f"{self} is on a {self.fs.type_name} store, not a local disk: read it through "
                            "pipeline.games.storage_fs")
        return self.path

    def _key(self) -> tuple[str, str, str]:
        return (self.scheme, self.path, self.query)

    @property
    def uri(self) -> str:
        """The location with its store options: what :func:`store_path` reopens."""
        return str(self) + (f"?{self.query}" if self.query else "")

    @property
    def is_local(self) -> bool:
        return bool(self.fs.type_name == "local")

    def __truediv__(self, part: str) -> StorePath:
        segments = [s for s in str(part).split("/") if s]
        if not segments or ".." in segments or str(part).startswith("/"):
            raise ValueError(f"{part!r} is not a relative path below {self}")
        return StorePath(self.fs, posixpath.join(self.path, *segments), self.scheme, self.query)

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)

    @property
    def stem(self) -> str:
        return posixpath.splitext(self.name)[0]

    @property
    def parent(self) -> StorePath:
        return StorePath(self.fs, posixpath.dirname(self.path) or self.path, self.scheme, self.query)

    def with_name(self, name: str) -> StorePath:
        return self.parent / name

    def relative_to(self, base: StorePath) -> str:
        """This path below ``base`` as "a/b/c" (ValueError when it is not below it)."""
        prefix = base.path.rstrip("/") + "/"
        if not self.path.startswith(prefix):
            raise ValueError(f"{self} is not below {base}")
        return self.path[len(prefix):]

    def local_path(self) -> Path:
        """The local path (ValueError for a remote store)."""
        if not self.is_local:
            raise ValueError(f"{self} is not on a local disk")
        return Path(self.path)

    # -- queries ---------------------------------------------------------------------------

    def _info(self) -> Any:
        return self.fs.get_file_info(self.path)

    def exists(self) -> bool:
        return bool(self._info().type != pafs.FileType.NotFound)

    def is_file(self) -> bool:
        return bool(self._info().type == pafs.FileType.File)

    def is_dir(self) -> bool:
        return bool(self._info().type == pafs.FileType.Directory)

    def size(self) -> int:
        info = self._info()
        if info.type != pafs.FileType.File:
            raise FileNotFoundError(f"no file at {self}")
        return int(info.size)

    def files(self) -> list[StorePath]:
        """Every file below this folder (none when it does not exist), sorted by path."""
        selector = pafs.FileSelector(self.path, recursive=True, allow_not_found=True)
        infos = self.fs.get_file_info(selector)
        return sorted((StorePath(self.fs, i.path, self.scheme, self.query) for i in infos
                       if i.type == pafs.FileType.File), key=lambda p: p.path)

    def glob(self, pattern: str) -> list[StorePath]:
        """Files below this folder whose relative path matches ``pattern`` part by part
        (``variant=*/batch-*.parquet``; ``*`` never crosses a ``/``)."""
        parts = pattern.split("/")
        out = []
        for file in self.files():
            rel = file.relative_to(self).split("/")
            if len(rel) == len(parts) and all(map(fnmatch.fnmatchcase, rel, parts)):
                out.append(file)
        return out

    def rglob(self, pattern: str) -> list[StorePath]:
        """Files at any depth below this folder whose name matches ``pattern``."""
        return [f for f in self.files() if fnmatch.fnmatchcase(f.name, pattern)]

    # -- reading ---------------------------------------------------------------------------

    def read_bytes(self) -> bytes:
        with self.fs.open_input_stream(self.path) as stream:
            return bytes(stream.read())

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.read_bytes().decode(encoding)

    def open_input_file(self) -> Any:
        """A random-access pyarrow file (for Parquet footers)."""
        return self.fs.open_input_file(self.path)

    # -- writing ---------------------------------------------------------------------------

    def mkdir(self, parents: bool = True, exist_ok: bool = True) -> None:
        """Create the folder where folders exist (object stores have none: nothing to do)."""
        if self.fs.type_name not in RENAMING:
            return
        if not exist_ok and self.exists():
            raise FileExistsError(f"{self} exists")
        self.fs.create_dir(self.path, recursive=parents)

    def write_bytes(self, data: bytes) -> None:
        """Replace the file with ``data`` atomically (see the module docstring)."""
        if self.fs.type_name not in RENAMING:
            with self.fs.open_output_stream(self.path) as out:
                out.write(data)
            return
        self.parent.mkdir()
        tmp = self.with_name(f".{self.name}.{os.getpid()}.tmp")
        try:
            with self.fs.open_output_stream(tmp.path) as out:
                out.write(data)
            if self.is_local:
                _fsync(tmp.path, os.O_RDONLY)
            self.fs.move(tmp.path, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if self.is_local:
            _fsync(self.parent.path, os.O_RDONLY)

    def write_text(self, text: str, encoding: str = "utf-8") -> None:
        self.write_bytes(text.encode(encoding))

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self.fs.delete_file(self.path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    @contextlib.contextmanager
    def local_copy(self) -> Iterator[Path]:
        """A local file with this file's bytes (itself when local; a temp copy, same name, otherwise)."""
        if self.is_local:
            yield Path(self.path)
            return
        with tempfile.TemporaryDirectory(prefix="draughts-store-") as folder:
            copy = Path(folder) / self.name
            copy.write_bytes(self.read_bytes())
            yield copy


def _fsync(path: str, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def is_uri(location: str) -> bool:
    """Whether ``location`` names a store by URI (``scheme://...``) rather than a local path."""
    return "://" in location


def store_path(location: str | os.PathLike[str] | StorePath) -> StorePath:
    """A local path (made absolute) or a pyarrow filesystem URI as a :class:`StorePath`."""
    if isinstance(location, StorePath):
        return location
    text = os.fspath(location)
    if not is_uri(text):
        return StorePath(pafs.LocalFileSystem(), Path(text).expanduser().resolve().as_posix())
    base, _, query = text.partition("?")
    scheme = base.split("://", 1)[0].lower()
    options = query
    if scheme == "s3" and "allow_delayed_open" not in query:
        options = "&".join(q for q in (query, "allow_delayed_open=true") if q)
    try:
        fs, path = pafs.FileSystem.from_uri(f"{base}?{options}" if options else base)
    except (pa.ArrowException, ValueError, OSError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise StoreError(f"cannot open {base!r} through pyarrow's filesystems: {first}") from None
    if fs.type_name == "local":
        return StorePath(fs, Path(path).as_posix())
    return StorePath(fs, path.rstrip("/"), scheme, options)


def joined(root: str | os.PathLike[str] | StorePath, *parts: str) -> StorePath:
    """``root`` (as :func:`store_path` reads it) with ``parts`` appended."""
    out = store_path(root)
    for part in parts:
        out = out / part
    return out
