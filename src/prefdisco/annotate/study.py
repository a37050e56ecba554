"""The study plug-in: what one human study brings to the one annotation app, and the registry of studies.

A study is a ``Study`` subclass: its ``name`` (``--study NAME``), its ``pages`` (``task_app.TaskPages``: its path
prefix, its API and its words), the serve ``options`` it reads (fields of ``ServeOptions``), its ``store`` (the
``database.Database`` subclass whose tables it adds to the shared file), and four steps: ``load`` (what must
resolve before anything is written, e.g. the models), ``prepare`` (fix or check its items in the database),
``handlers`` (its ``task_app.TaskApp``: item pages, form and JSON answers) and ``export``. Everything else —
log-in, tokens, the cookie, the overview, the templates, the server — is the shared base's, once
(``task_app.StudyServer``, ``serve_options.serve_studies``).

``STUDIES`` maps each name to where its class lives (``module:Class``), imported only when the study is used, so
serving relevance labels never loads the play study's model stack. To add a study, write its class and add it
here (or call ``register_study``); docs/evaluation.md, "Human studies: one app", walks through it.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from prefdisco.annotate.auth import CookieSigner, Tokens
from prefdisco.annotate.database import Database
from prefdisco.annotate.task_app import TaskApp, TaskPages
from prefdisco.errors import UserError

STUDIES: dict[str, str] = {
    "relevance": "prefdisco.annotate.service:RelevanceStudy",
    "rating": "prefdisco.annotate.rating_service:RatingStudy",
    "play": "prefdisco.annotate.play_service:PlayUserStudy",
}
DEFAULT_STUDY = "relevance"


@dataclass(frozen=True)
class ServeOptions:
    """Every study option of ``annotate serve`` (None: not given; each study applies its own default)."""

    bench: Path | None = None  # BENCH_DIR (relevance, play; rating: the benchmark the run evaluated)
    run: Path | None = None  # rating: the eval run folder
    per_task: int | None = None  # relevance: scenarios per task [2]; play: problems per task [every scenario]
    seed: int | None = None  # every study's draw [0] (play: also the calls' run seed)
    items: int | None = None  # rating: items drawn [60]
    model: str | None = None  # play: the model under test
    judge_model: str | None = None  # play: the judge
    mode: str | None = None  # play: discovery or fixed_k
    k: int | None = None  # play: the question budget
    judge: str | None = None  # play: per_criterion or structured
    references: bool | None = None  # play: baseline and oracle once per scenario
    ask: str | None = None  # play: how the model asks, text or tools
    preset: str | None = None  # play: the prompts and fixed settings, default or paper

    def given(self) -> list[str]:
        """The options given (not None), as field names."""
        return [f.name for f in fields(self) if getattr(self, f.name) is not None]


@dataclass
class Started:
    """What a study's ``prepare`` reports: summary lines and notes (printed before the server starts)."""

    lines: list[str]
    notes: list[str] = field(default_factory=list)


class Study(ABC):
    """One human study, plugged into the one annotation app (module docstring)."""

    name: ClassVar[str]  # --study NAME
    summary: ClassVar[str]  # one line for --help and the docs
    pages: ClassVar[TaskPages]  # its path prefix (pages.path), its API (pages.api) and its words
    options: ClassVar[tuple[str, ...]]  # the ServeOptions fields it reads
    required: ClassVar[tuple[str, ...]] = ()  # of those, the ones it cannot start without
    store: ClassVar[type[Database]]  # its tables in the shared file

    def __init__(self, db: Path, options: ServeOptions) -> None:
        """Check the options (a one-line UserError), before any port is probed or file read (``select_studies``
        has checked ``required``; the export commands make a study with no options)."""
        self.db = Path(db)
        self.opts = options

    def load(self) -> None:  # noqa: B027 — most studies need nothing loaded
        """Resolve what must work before anything is written (the play study's models)."""

    @abstractmethod
    def prepare(self) -> Started:
        """Fix this study's items in the database on the first start; on later starts check they are the same."""

    @abstractmethod
    def handlers(self, tokens: Tokens, signer: CookieSigner) -> TaskApp[Any, Any]:
        """Its request handlers (item pages, form and JSON answers) for the prepared database."""

    @abstractmethod
    def export(self, out: Path, overwrite: bool = False) -> str:
        """Write its answers to ``out``; the line the export command prints."""


def flag(option: str) -> str:
    """The command-line flag of a ``ServeOptions`` field (``bench`` is the BENCH_DIR argument)."""
    return "BENCH_DIR" if option == "bench" else "--" + option.replace("_", "-")


def register_study(name: str, target: str) -> None:
    """Add a study to the registry: ``target`` is ``module:Class`` (a ``Study`` subclass), imported when used."""
    STUDIES[name] = target


def study_class(name: str) -> type[Study]:
    """The registered study ``name``'s class; a one-line UserError for an unknown name."""
    if name not in STUDIES:
        raise UserError(f"--study: expected one of {', '.join(STUDIES)}, got {name!r}")
    module, _, attribute = STUDIES[name].partition(":")
    cls = getattr(importlib.import_module(module), attribute)
    if not (isinstance(cls, type) and issubclass(cls, Study)) or cls.name != name:
        raise TypeError(f"{STUDIES[name]} is not the Study named {name!r}")
    return cls


def select_studies(names: list[str], db: Path, options: ServeOptions) -> list[Study]:
    """The named studies, in order, each checking its options; a one-line UserError for an unknown or repeated
    name, or an option no selected study reads."""
    if len(set(names)) != len(names):
        raise UserError("--study: each study may be named once")
    classes = [study_class(name) for name in names]
    read = {option for cls in classes for option in cls.options}
    for option in options.given():
        if option not in read:
            readers = [n for n in STUDIES if option in study_class(n).options]
            raise UserError(f"{flag(option)}: none of the studies served reads it (add --study {' / '.join(readers)})")
    for cls in classes:
        for option in cls.required:
            if getattr(options, option) is None:
                raise UserError(f"{flag(option)}: study {cls.name} needs it")
    return [cls(db, options) for cls in classes]
