"""A run's whole configuration as one file: ``prefdisco eval --config FILE`` and the ``config.toml`` of every run.

The file is TOML, one key per ``prefdisco eval`` setting, named as its flag without the dashes (``user-model``,
``judge-model``, ``max-questions``; underscores are accepted too), and ``bench`` for the benchmark argument; a
relative path (``bench``, ``log-dir``, ``prices``, ``sessions``) is relative to the file's own
folder, not to where the command runs::

    bench = "bench/math500"
    model = ["openai/gpt-4.1"]
    judge-model = ["openai/gpt-4.1", "anthropic/claude-sonnet-4"]
    modes = ["baseline", "discovery", "oracle"]
    user-type = "targeted"
    log-dir = "runs/gpt41"

A value is what the flag takes: a list for a flag that repeats (``model``, ``judge-model``, ``model-arg``,
``solver-arg``; one value is a list of one) or a comma-separated one (``modes``, ``fixed-k``); a table for
``model-arg`` / ``solver-arg`` (``model-arg = {n_ctx = 4096}``) is their ``key=value`` pairs. The file's values
are the command's defaults (click's ``default_map``, in the click typer carries): a flag given on the command
line overrides it, and every value is checked as the flag's own would be, the error naming the file and the key.

Every run writes the settings it ran with, resolved (the file's, the flags', the defaults; paths relative to the run
folder, ``log-dir = "."``), to ``LOG_DIR/config.toml`` once the folder is checked (``evaluation/run.py``), so a
published number is rerun from one file: ``prefdisco eval --config RUN/config.toml`` (in the same folder it resumes and
makes no call, also after the folder was copied or moved; with ``--log-dir`` elsewhere it runs again). The file names no
absolute path of the machine the run was made on. ``prefdisco config RUN`` prints it.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w
import typer

from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError
from prefdisco.results.protocol_record import RENAMED_SETTINGS

CONFIG_FILE = "config.toml"
NOT_SETTINGS = ("config_file", "dry_run")
"""Parameters of ``prefdisco eval`` that are not settings of a run: the file itself, and the dry run."""
JOINED = ("modes", "fixed_k")
"""Settings the command takes comma-separated: a list in the file is joined."""
PAIRS = ("model_arg", "solver_arg")
"""Settings the command takes as repeated ``key=value``: a table in the file is split into pairs."""
PATH_SETTINGS = ("bench", "log_dir", "prices", "sessions")
"""Settings that name a file or folder: relative in a file, they are relative to the file's own folder; written,
they are relative to the run folder (where ``config.toml`` is), so the same file reruns the same run from any
directory, and from wherever the run folder is copied, with what it names at the same place beside it."""


OLDER_KEYS = {old.replace("_", "-"): new.replace("_", "-") for old, new in RENAMED_SETTINGS.items()}
"""A setting's older key (``protocol``, ``constrain-protocol``) read as its new one (``ask``, ``constrain-ask``)."""


def key_of(param: Any) -> str:
    """The file's key of ``param``: its name with dashes (``user_model`` → ``user-model``)."""
    return (param.name or "").replace("_", "-")


def settings_of(command: Any) -> dict[str, Any]:
    """The settings of ``command`` by key: every parameter but ``NOT_SETTINGS`` and the click context."""
    return {key_of(p): p for p in command.params if p.name and p.name not in NOT_SETTINGS}


def _as_flag_value(name: str, value: Any) -> Any:
    if name in JOINED and isinstance(value, list):
        return ",".join(str(v) for v in value)
    if name in PAIRS and isinstance(value, dict):
        return [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in value.items()]
    return value


def read_config(path: Path, command: Any, ctx: typer.Context) -> dict[str, Any]:
    """The file's settings as the command's defaults (parameter name → value), each checked as its flag would be."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise UserError(f"--config {path}: no such file") from e
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"--config {path}: cannot be read ({e})") from e
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"--config {path}: not valid TOML ({e})") from e
    params = settings_of(command)
    defaults: dict[str, Any] = {}
    for given, value in raw.items():
        key = given.strip().lstrip("-").replace("_", "-")
        key = OLDER_KEYS.get(key, key)
        param = params.get(key)
        if param is None:
            expected = ", ".join(sorted(params))
            raise UserError(f"{path}: unknown setting {given!r}; expected one of {expected}")
        assert param.name is not None
        value = _as_flag_value(param.name, value)
        if param.name in PATH_SETTINGS and isinstance(value, str):
            value = str(Path(path).parent.absolute() / Path(value).expanduser())
        if getattr(param, "multiple", False) and not isinstance(value, list):
            value = [value]
        if isinstance(value, (dict, list)) and not getattr(param, "multiple", False):
            raise UserError(f"{path}: {given}: expected a single value, got {type(value).__name__}")
        if getattr(param, "is_flag", False) and not isinstance(value, bool):
            raise UserError(f"{path}: {given}: expected true or false, got {value!r}")
        try:
            param.process_value(ctx, value)  # its type, its bounds (a setting's callback, if any, is --config's)
        except typer.BadParameter as e:
            raise UserError(f"{path}: {given}: {e.message}") from e
        defaults[param.name] = value
    return defaults


def load_into(ctx: typer.Context, value: Path | None) -> Path | None:
    """The ``--config`` callback (an eager option): the file's settings become the command's defaults."""
    if value is not None and not ctx.resilient_parsing:
        ctx.default_map = {**(ctx.default_map or {}), **read_config(Path(value), ctx.command, ctx)}
    return value


def _toml_value(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_toml_value(v) for v in value]
    return value


def resolved(values: Mapping[str, Any]) -> dict[str, Any]:
    """The run's settings as the file writes them (key → value; a setting left unset, None, is left out: it reads
    back as its default); paths relative to the run folder (``values["log_dir"]``)."""
    folder = values.get("log_dir")
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name in NOT_SETTINGS or value is None:
            continue
        if name in PATH_SETTINGS:
            value = relative_to(Path(value), Path(folder) if folder is not None else None)
        out[name.replace("_", "-")] = _toml_value(value)
    return out


def relative_to(path: Path, folder: Path | None) -> str:
    """``path`` as the run folder ``folder``'s config.toml names it: relative to ``folder`` (``.`` for the folder
    itself), with forward slashes; absolute only where no relative path leads there (no folder, another drive).
    Both are resolved first: the system follows a ``..`` from the folder's real place, not through a link to it."""
    target = path.expanduser().resolve()
    if folder is None:
        return str(target)
    try:
        return Path(os.path.relpath(target, folder.expanduser().resolve())).as_posix()
    except ValueError:
        return str(target)


def write_config(log_dir: Path, settings: Mapping[str, Any]) -> Path:
    """Write ``settings`` (``resolved``) to ``log_dir/config.toml``, whole or not at all."""
    path = log_dir / CONFIG_FILE
    header = "# prefdisco eval's settings of this run, resolved: rerun it with prefdisco eval --config THIS_FILE\n"
    atomic_write(path, header + tomli_w.dumps(dict(settings)))
    return path


def show_config(run: Path) -> str:
    """The ``config.toml`` of the run folder ``run`` (``prefdisco config RUN``)."""
    path = run / CONFIG_FILE if run.is_dir() else run
    if not run.exists():
        raise UserError(f"{run}: no such run folder")
    if not path.is_file():
        raise UserError(
            f"{run}: no {CONFIG_FILE}; a run writes it from prefdisco eval (an older run, or one made from Python, "
            "has only run.json)"
        )
    return path.read_text(encoding="utf-8")
