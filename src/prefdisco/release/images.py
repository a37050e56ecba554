"""Images of a release (ScienceQA): relative paths ``images/…`` next to the JSONL file, copied along with it.

A record's image is ``parsed_problem.image`` when set, else ``original_problem.image`` (the paper's validator's
order); a string without a URL scheme is a path relative to the file's folder (an absolute path is used as is).
Import into a benchmark folder copies them into the folder, export copies them next to the written file, each
under the same relative path; a path that leaves the folder (``..``) is never copied.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlparse

from prefdisco.atomic import atomic_write


def record_image(record: dict[str, Any]) -> str | None:
    """The image path or URL a record names, or None."""
    parsed = record.get("parsed_problem")
    image = parsed.get("image") if isinstance(parsed, dict) else None
    if image in (None, ""):
        source = record.get("original_problem")
        image = source.get("image") if isinstance(source, dict) else None
    return image if isinstance(image, str) and image else None


def local_path(image: str) -> str | None:
    """``image`` when it is a relative path inside the file's folder, else None (a URL, absolute, or ``..``)."""
    if urlparse(image).scheme and not Path(image).drive:
        return None
    path = PurePosixPath(image.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts:
        return None
    return image


def copy_images(paths: list[str], src_dir: Path, dst_dir: Path) -> tuple[list[str], list[str]]:
    """Copy each relative image from ``src_dir`` to ``dst_dir`` (same relative path). Returns (copied, missing)."""
    copied: list[str] = []
    missing: list[str] = []
    for rel in dict.fromkeys(paths):
        src, dst = src_dir / rel, dst_dir / rel
        if not src.is_file():
            missing.append(rel)
            continue
        if dst.resolve() != src.resolve():
            atomic_write(dst, src.read_bytes())
        copied.append(rel)
    return copied, missing
