"""What every study's export shares: the check of ``--out``'s folder and the atomic CSV writer.

``annotate export`` (relevance labels) and ``export --study rating`` (ratings) write one CSV through
``write_rows``; ``export --study play`` writes a run folder (``play_export``) whose parent ``check_out`` checks the
same way. Each study's ``Study.export`` (``study.py``) is what the export command calls.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError


def check_out(out: Path) -> Path:
    """``out`` as a path whose folder exists; a one-line UserError otherwise."""
    out = Path(out)
    if not out.parent.is_dir():
        raise UserError(f"{out}: folder {out.parent} does not exist")
    return out


def write_rows(out: Path, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Write a header and ``rows`` as CSV to ``out`` atomically (temp file in the same folder, then
    ``os.replace``): a row that cannot be written leaves the old file as it was."""
    out = check_out(out)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    atomic_write(out, buffer.getvalue())
