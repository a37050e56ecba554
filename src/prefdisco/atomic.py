"""Atomic file writes: a temp file in the target's folder, then ``os.replace``.

A crash or kill never leaves a half-written file under the final name, and a folder that cannot be created or
written gives a one-line ``UserError`` naming it. The file gets the mode an ordinary ``open`` would give it (0666
less the umask: 0644 under umask 022), not the temp file's private 0600.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from prefdisco.errors import UserError


def current_umask() -> int:
    """The process's umask, read without changing it where the system shows it (Linux), else set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temp path beside ``path``; on success it replaces ``path``, on error it is removed."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            os.fchmod(fd, 0o666 & ~current_umask())
        finally:
            os.close(fd)
    except OSError as e:
        raise UserError(f"{path.parent}: cannot write there ({e.strerror or e})") from e
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write ({e.strerror or e})") from e
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write(path: Path, data: bytes | str) -> None:
    with atomic_path(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data, encoding="utf-8")


def atomic_open(path: Path, write: Callable[[IO[Any]], None], mode: str = "w") -> None:
    """Call ``write(f)`` with the temp file open in ``mode`` (text mode uses UTF-8)."""
    with atomic_path(path) as tmp:
        encoding = None if "b" in mode else "utf-8"
        with tmp.open(mode, encoding=encoding) as f:
            write(f)
