"""How people answer a clarifying question, and how a simulated user does: per-answer measures, their statistics and
the reference fidelity score (``prefdisco simfidelity --reference``; defined in docs/evaluation.md, "Simulated users
against real people"). The people's answers and each simulator's are measured by this one code.

Per answer (``measure``), with words the lower-case runs of letters, digits and apostrophes:

* ``words`` — the number of words;
* ``starts_no`` / ``starts_yes`` — the first word is a no-word (``NO_WORDS``) / a yes-word (``YES_WORDS``), unless
  the answer opens with a don't-know ("no idea", "not sure": a don't-know, not a no);
* ``bare_yes_no`` — a bare yes or no: at most two words, the first a yes- or no-word ("no", "yes please"), not a
  don't-know;
* ``dont_know`` — says they do not know or are unsure (``DONT_KNOW``);
* ``disclosure`` — the share of the need's content words not in the question that the answer contains (content
  words: words of three letters or more outside ``STOP_WORDS``, a final "s" dropped from words of four letters or
  more); undefined when the need has no such word;
* ``discloses_any`` — disclosure above 0 (undefined where disclosure is);
* ``polarity`` — ``yes``, ``no`` or none: how the answer starts.

An empty reply (a simulator that returned nothing, ``hygiene.EMPTY_REPLIES``) is no answer: every measure of it is
undefined, it counts in ``empty`` and in no statistic (neither as a 0-word answer nor as a disagreement).

Per party (the people, or one simulator, on the same rows): ``n``, ``mean_words``, ``median_words``, the share of
answers with each yes/no/don't-know measure, the mean ``disclosure`` and ``discloses_any`` over the answers where
they are defined, and for a simulator ``polarity_agreement``: over the rows where the person's answer starts with
a yes- or no-word, the share where the simulator's starts with one of the same polarity.

A simulator's **reference fidelity** (``reference_fidelity``; named apart from the replay fidelity of
``simfidelity/measures.py``, a simulator against the person of a play study) is the mean of eight closenesses to the
people, each 1 when equal and 0 at the farthest: ``min/max`` of the mean words, 1 − |difference| of the six shares
(starts no, starts yes, bare yes/no, don't know, mean disclosure, discloses any), and the polarity agreement itself.
1 = indistinguishable from the people on these statistics. Its tables (each statistic's distance from the people and
its interval beside it, the per-statistic verdicts of each pair of simulators) are ``table.py``'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.validity.reference import SHARES
from prefdisco.dialogue.hygiene import EMPTY_REPLIES

NO_WORDS = frozenset({"no", "nope", "nah", "not", "never", "neither"})
YES_WORDS = frozenset({"yes", "yeah", "yep", "yup", "yea", "sure", "correct", "exactly", "absolutely", "definitely"})
DONT_KNOW = re.compile(
    r"\b(?:(?:i\s+)?(?:don'?t|do\s+not|dont)\s+know|not\s+sure|unsure|no\s+idea|not\s+certain|can'?t\s+say)\b"
)
STOP_WORDS = frozenset(
    (
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "are",
        "was",
        "were",
        "been",
        "being",
        "have",
        "has",
        "had",
        "does",
        "did",
        "doing",
        "about",
        "into",
        "onto",
        "over",
        "under",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "these",
        "those",
        "some",
        "any",
        "all",
        "each",
        "other",
        "such",
        "only",
        "own",
        "same",
        "very",
        "can",
        "will",
        "just",
        "should",
        "would",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "your",
        "you",
        "yours",
        "our",
        "ours",
        "his",
        "her",
        "hers",
        "its",
        "it's",
        "i'm",
        "i'd",
        "i've",
        "find",
        "information",
        "give",
        "want",
        "looking",
        "know",
        "like",
        "also",
        "more",
        "most",
        "much",
        "many",
        "get",
        "out",
        "use",
        "used",
        "using",
    )
)
WORD = re.compile(r"[a-z0-9']+")
"""The eight closenesses a reference fidelity is the mean of."""


def words(text: str) -> list[str]:
    return WORD.findall(str(text).lower())


def content_words(text: str) -> set[str]:
    """The content words of ``text`` (module docstring), each with a final "s" dropped from four letters on."""
    out = set()
    for w in words(text):
        w = w.removesuffix("'s").strip("'")
        if len(w) >= 3 and w not in STOP_WORDS:
            out.add(w[:-1] if len(w) >= 4 and w.endswith("s") else w)
    return out


def polarity(text: str) -> str | None:
    """``yes`` or ``no``: how ``text`` starts (a yes- or no-word first); None otherwise, and for an answer opening
    with a don't-know ("No idea.", "Not sure, sorry.": a don't-know, not a no)."""
    said = words(text)
    if not said or DONT_KNOW.match(" ".join(said)):
        return None
    return "no" if said[0] in NO_WORDS else "yes" if said[0] in YES_WORDS else None


def measure(answer: str, need: str, question: str) -> dict[str, Any]:
    """The per-answer measures of ``answer`` to ``question`` by a person holding ``need`` (module docstring); all
    None for an empty reply."""
    if str(answer).strip() in EMPTY_REPLIES:
        return dict.fromkeys(("words", *SHARES, "disclosure", "discloses_any", "polarity"))
    said = words(answer)
    first = polarity(answer)
    hidden = content_words(need) - content_words(question)
    told = content_words(answer)
    disclosure = len(hidden & told) / len(hidden) if hidden else None
    return {
        "words": len(said),
        "starts_no": first == "no",
        "starts_yes": first == "yes",
        "bare_yes_no": first is not None and len(said) <= 2,
        "dont_know": bool(DONT_KNOW.search(" ".join(said))),
        "disclosure": disclosure,
        "discloses_any": None if disclosure is None else disclosure > 0,
        "polarity": first,
    }


def measured(answers: Sequence[str], needs: Sequence[str], questions: Sequence[str]) -> pd.DataFrame:
    """One row of ``measure`` per answer, in order."""
    rows = [measure(a, n, q) for a, n, q in zip(answers, needs, questions, strict=True)]
    return pd.DataFrame(rows, columns=["words", *SHARES, "disclosure", "discloses_any", "polarity"])


def _mean(values: pd.Series) -> float | None:
    kept = values.dropna()
    return float(kept.astype(float).mean()) if len(kept) else None


def party_statistics(measures: pd.DataFrame, person: pd.DataFrame | None = None) -> dict[str, Any]:
    """The statistics of one party's answers (module docstring); ``person``: the people's measures of the same
    rows, for a simulator's polarity agreement."""
    answered = measures["words"].notna()
    out: dict[str, Any] = {"n": int(answered.sum()), "empty": int((~answered).sum())}
    out["mean_words"] = float(measures["words"][answered].mean()) if answered.any() else None
    out["median_words"] = float(measures["words"][answered].median()) if answered.any() else None
    for share in SHARES:
        out[share] = _mean(measures[share])
    out["disclosure"] = _mean(measures["disclosure"])
    out["discloses_any"] = _mean(measures["discloses_any"])
    out["polarity_agreement"] = None
    if person is not None:
        held = (person["polarity"].notna() & answered).to_numpy()
        if held.any():
            out["polarity_agreement"] = float(
                (measures["polarity"].to_numpy()[held] == person["polarity"][held]).mean()
            )
    return out


def _columns(measures: pd.DataFrame) -> dict[str, np.ndarray]:
    """The measures as float arrays (NaN where undefined); polarity as 1 (yes), 2 (no) or NaN."""
    out = {name: measures[name].astype(float).to_numpy() for name in ("words", *SHARES, "disclosure", "discloses_any")}
    out["polarity"] = measures["polarity"].map({"yes": 1.0, "no": 2.0}).astype(float).to_numpy()
    return out


def row_means(values: np.ndarray) -> np.ndarray:
    """Each row's mean over its defined entries (NaN where none is), without numpy's all-NaN warning."""
    defined = ~np.isnan(values)
    count = defined.sum(axis=1)
    total = np.where(defined, values, 0.0).sum(axis=1)
    return np.divide(total, count, out=np.full(len(values), np.nan), where=count > 0)


def resampled_closeness(person: pd.DataFrame, simulator: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """The simulator's eight closenesses to the people (``CLOSENESS``, module docstring) on each resample of the rows
    at once (``rows``: resamples × rows, the row indices drawn; the people's and the simulator's answers of a row
    together): resamples × 8, NaN where a closeness is undefined. The one computation of them: a point estimate is
    the resample of every row once."""
    p, s = _columns(person), _columns(simulator)
    closeness = []
    a, b = row_means(s["words"][rows]), row_means(p["words"][rows])
    big = np.fmax(a, b)
    ratio = np.divide(np.fmin(a, b), big, out=np.ones_like(big), where=big != 0)
    closeness.append(np.where(np.isnan(a) | np.isnan(b), np.nan, ratio))
    for name in (*SHARES, "disclosure", "discloses_any"):
        closeness.append(1.0 - np.abs(row_means(s[name][rows]) - row_means(p[name][rows])))  # NaN where either is
    held = ~np.isnan(p["polarity"][rows]) & ~np.isnan(s["words"][rows])
    agree = held & (s["polarity"][rows] == p["polarity"][rows])
    closeness.append(np.where(held.any(axis=1), agree.sum(axis=1) / np.maximum(held.sum(axis=1), 1), np.nan))
    return np.stack(closeness, axis=1)


def resampled_reference_fidelity(person: pd.DataFrame, simulator: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """The simulator's reference fidelity to the people (module docstring: the mean of the eight closenesses
    defined, ``resampled_closeness``) on each resample of the rows at once, NaN where no closeness is defined."""
    return row_means(resampled_closeness(person, simulator, rows))


def reference_fidelity(person: pd.DataFrame, simulator: pd.DataFrame) -> float | None:
    """The simulator's reference fidelity on all rows (``resampled_reference_fidelity``); None when no closeness is
    defined."""
    value = float(resampled_reference_fidelity(person, simulator, np.arange(len(person))[None, :])[0])
    return None if np.isnan(value) else value


def fit_behaviour(measures: pd.DataFrame, source: str) -> dict[str, Any]:
    """The human-like user's behaviour (``dialogue/humanlike.Behaviour``) fitted from the people's ``measures``
    (``measured``) as the user applies it, each share of the answers the step before leaves: the share saying they
    don't know; of the rest, the share answering a bare yes or no; of the rest (the full answers), the share opening
    with a yes- or no-word and the share disclosing any of their need (where defined); and the word counts of the
    full answers at the 5th, 10th, …, 95th percentiles."""
    frame = measures.dropna(subset=["words"])
    if frame.empty:
        raise ValueError("no answer to fit a behaviour from")
    dont_know = frame["dont_know"].astype(bool)
    rest = frame[~dont_know]
    bare = rest["bare_yes_no"].astype(bool)
    full = rest[~bare]
    opens = full["starts_no"].astype(bool) | full["starts_yes"].astype(bool)
    disclosed = full["discloses_any"].dropna()
    counts = full["words"] if len(full) else frame["words"]
    return {
        "source": source,
        "dont_know": float(dont_know.mean()),
        "bare": float(bare.mean()) if len(rest) else 0.0,
        "opens_yes_no": float(opens.mean()) if len(full) else 0.0,
        "discloses": float(disclosed.astype(float).mean()) if len(disclosed) else 0.0,
        "words": [round(float(counts.quantile(q / 100))) for q in range(5, 100, 5)],  # a distribution, no interval
    }
