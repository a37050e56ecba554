"""Deterministic lexical dedup of attribute names: map proposals onto Θ, cluster the rest.

No model and no embedding is involved; the matcher is lexical and fully transparent (the model-judged pass
that follows it in a build is :mod:`prefdisco.builder.semantic_dedup`):

1. **Normalize** a name into tokens (:func:`normalize_tokens`): lower-case, ``&`` → ``and``, punctuation and
   hyphens → spaces, simple plurals singularized (``-ies`` → ``-y``, ``-sses`` → ``-ss``, a final ``-s``
   dropped unless the word ends in ``ss``/``us``/``is``), spelling variants folded through :data:`SYNONYMS`,
   and filler words dropped (:data:`STOP_WORDS`: "level of", "preference for", "degree of", "use of", ...).
   The *key* of a name is its sorted, de-duplicated tokens joined by spaces.
2. **Exact match**: a proposal whose key (or compact form: tokens in order, spaces removed, so
   "Selfconfidence" equals "Self-confidence") equals that of a catalogue name or alias maps to that attribute.
3. **Similarity**: otherwise ``score = 0.75 · J + 0.25 · R`` where ``J`` is a soft Jaccard index over the two
   token sets (two tokens match when equal, or when both have >= 5 letters and a difflib ratio >= 0.85, which
   absorbs typos and British/American spellings) and ``R`` is the difflib ratio of the two keys. The score is
   symmetric. A proposal maps to the catalogue attribute with the best score over its name and aliases if that
   score reaches ``threshold``; ties are broken by score (desc), then catalogue order, then name.
4. **New names** that matched nothing are clustered among themselves: two are linked when their score reaches
   ``threshold`` (or their keys are equal), and clusters are the connected components of that graph. Each
   cluster's canonical name is the member with the lexicographically smallest ``(key, cleaned name)``.

Every rule depends only on the *set* of inputs, so any order of the same proposals gives the same mapping.
A new canonical name is the proposal with its whitespace collapsed; a name whose key is empty (only filler
words) is never matched and maps to itself. The default threshold (0.6) is deliberately conservative: a
two-word name sharing one word with a one-word alias ("Heat transfer" vs "transfer") stays new, because a
wrong merge loses a dimension while a missed merge only keeps a near-duplicate. Pairs are pre-filtered by an
exact upper bound on the score (:class:`_Index`), which speeds things up without changing any result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Literal

from prefdisco.schema import Attribute

DEFAULT_THRESHOLD = 0.6
"""Minimum similarity score for a non-exact match (see the module docstring for the formula)."""

TOKEN_WEIGHT = 0.75
"""Share of the soft Jaccard index in the score; the rest is the difflib ratio of the keys."""

SOFT_TOKEN_RATIO = 0.85
SOFT_TOKEN_MIN_LEN = 5

STOP_WORDS: frozenset[str] = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "for",
        "to",
        "in",
        "on",
        "with",
        "about",
        "and",
        "or",
        "by",
        "at",
        "as",
        "into",
        "level",
        "degree",
        "amount",
        "extent",
        "preference",
        "preferred",
        "prefer",
        "need",
        "desire",
        "use",
        "usage",
        "using",
        "user",
        "learner",
        "student",
        "person",
        "their",
        "s",
    }
)
"""Filler words dropped from names before comparison (applied after singularizing)."""

SYNONYMS: Mapping[str, str] = {
    # spelling variants and derived forms that name the same dimension
    "maths": "math",
    "mathematic": "math",
    "mathematical": "math",
    "anxious": "anxiety",
    "nervousness": "anxiety",
    "nervous": "anxiety",
    "worry": "anxiety",
    "confident": "confidence",
    "motivated": "motivation",
    "motivational": "motivation",
    "encouraging": "encouragement",
    "encourage": "encouragement",
    "verbose": "verbosity",
    "wordy": "verbosity",
    "wordiness": "verbosity",
    "concise": "conciseness",
    "visualisation": "visualization",
    "visualise": "visualize",
    "structured": "structure",
    "structuring": "structure",
    "organisation": "organization",
    "humour": "humor",
    "humorous": "humor",
    "detail": "depth",
    "detailed": "depth",
    "reassurance": "encouragement",
    "reassuring": "encouragement",
    "explanatory": "explanation",
    "explain": "explanation",
    "analogical": "analogy",
    "notational": "notation",
    "mistake": "error",
    "checking": "check",
    "verify": "verification",
    "pacing": "pace",
    "paced": "pace",
    "curious": "curiosity",
    "persistent": "persistence",
}
"""Token → canonical token, applied after singularizing. Kept small and conservative on purpose."""

MatchKind = Literal["exact", "similar", "cluster", "new"]


@dataclass(frozen=True)
class Match:
    """How one proposed name was resolved."""

    proposed: str
    canonical: str
    kind: MatchKind  # exact/similar: a catalogue attribute; cluster: another proposal; new: itself
    score: float
    matched_form: str  # the catalogue name/alias or the proposal it matched ("" for new)


def clean(name: str) -> str:
    """Collapse internal whitespace and strip the ends."""
    return " ".join(name.split())


def singularize(word: str) -> str:
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def normalize_tokens(name: str) -> tuple[str, ...]:
    """The comparison tokens of a name, in their original order (duplicates kept)."""
    text = name.casefold().replace("&", " and ")
    text = re.sub(r"[\W_]+", " ", text)
    out: list[str] = []
    for raw in text.split():
        tok = SYNONYMS.get(singularize(raw), singularize(raw))
        if tok not in STOP_WORDS:
            out.append(tok)
    return tuple(out)


def normalized_key(name: str) -> str:
    """Sorted, de-duplicated tokens joined by spaces: equal keys mean an exact match."""
    return " ".join(sorted(set(normalize_tokens(name))))


def compact_form(name: str) -> str:
    """The tokens in order with no spaces: "Self confidence" and "Selfconfidence" share it (exact match)."""
    return "".join(normalize_tokens(name))


@lru_cache(maxsize=262144)
def _tokens_match(a: str, b: str) -> bool:
    if a == b:
        return True
    la, lb = len(a), len(b)
    if min(la, lb) < SOFT_TOKEN_MIN_LEN or 2 * min(la, lb) / (la + lb) < SOFT_TOKEN_RATIO:
        return False  # the ratio can never reach the bar: skip difflib
    x, y = sorted((a, b))
    sm = SequenceMatcher(None, x, y)
    return sm.quick_ratio() >= SOFT_TOKEN_RATIO and sm.ratio() >= SOFT_TOKEN_RATIO


def _soft_jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    in_b = sum(1 for t in a if any(_tokens_match(t, u) for u in b))
    in_a = sum(1 for u in b if any(_tokens_match(t, u) for t in a))
    m = min(in_a, in_b)
    return m / (len(a) + len(b) - m)


@lru_cache(maxsize=262144)
def similarity(key_a: str, key_b: str) -> float:
    """Symmetric similarity in [0, 1] of two normalized keys; 1.0 when they are equal and non-empty."""
    if not key_a or not key_b:
        return 0.0
    if key_a == key_b:
        return 1.0
    x, y = sorted((key_a, key_b))
    j = _soft_jaccard(frozenset(x.split()), frozenset(y.split()))
    r = SequenceMatcher(None, x, y).ratio()
    return TOKEN_WEIGHT * j + (1 - TOKEN_WEIGHT) * r


def name_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1] of two raw names: 1.0 when their keys or compact forms agree, else :func:`similarity`
    of their keys."""
    if compact_form(a) and compact_form(a) == compact_form(b):
        return 1.0
    return similarity(normalized_key(a), normalized_key(b))


class _Index:
    """Candidate generation, so that only pairs that can reach the threshold are scored.

    With ``threshold > 1 - TOKEN_WEIGHT`` a pair needs a soft Jaccard index of at least
    ``(threshold - (1 - TOKEN_WEIGHT)) / TOKEN_WEIGHT``; a candidate is kept when its number of soft-matched
    query tokens allows that (or when the compact forms are equal). Pruning never changes a result.
    """

    def __init__(self, names: list[str], threshold: float) -> None:
        self.names = names
        self.min_jaccard = (threshold - (1 - TOKEN_WEIGHT)) / TOKEN_WEIGHT
        self.sizes = [len(set(normalize_tokens(n))) for n in names]
        self.postings: dict[str, set[int]] = {}
        self.compact: dict[str, set[int]] = {}
        for i, name in enumerate(names):
            for tok in set(normalize_tokens(name)):
                self.postings.setdefault(tok, set()).add(i)
            self.compact.setdefault(compact_form(name), set()).add(i)
        self._neighbours: dict[str, list[str]] = {}

    def candidates(self, name: str) -> list[int]:
        if self.min_jaccard <= 0:
            return list(range(len(self.names)))
        tokens = set(normalize_tokens(name))
        hits: dict[int, int] = {}  # candidate -> number of query tokens with a soft match in it
        for tok in tokens:
            near = self._neighbours.get(tok)
            if near is None:
                near = self._neighbours[tok] = [u for u in self.postings if _tokens_match(tok, u)]
            reached: set[int] = set()
            for u in near:
                reached |= self.postings[u]
            for c in reached:
                hits[c] = hits.get(c, 0) + 1
        out = set(self.compact.get(compact_form(name), ()))
        for c, m in hits.items():
            if m / (len(tokens) + self.sizes[c] - m) >= self.min_jaccard - 1e-12:
                out.add(c)
        return sorted(out)


def _best_catalogue_match(
    name: str, forms: list[tuple[int, str, str]], index: _Index, threshold: float
) -> Match | None:
    """forms: (catalogue index, attribute name, form text). Returns the best match or None."""
    best: tuple[float, int, str, str] | None = None  # (-score, catalogue index, name, form)
    for f in index.candidates(name):
        cat_index, attr_name, form = forms[f]
        score = name_similarity(name, form)
        if score < threshold:
            continue
        cand = (-score, cat_index, attr_name, form)
        if best is None or cand < best:
            best = cand
    if best is None:
        return None
    neg_score, _, attr_name, form = best
    kind: MatchKind = "exact" if neg_score == -1.0 else "similar"
    return Match(proposed="", canonical=attr_name, kind=kind, score=-neg_score, matched_form=form)


def explain(proposed: Iterable[str], catalogue: list[Attribute], threshold: float = DEFAULT_THRESHOLD) -> list[Match]:
    """Resolve every distinct proposed name; the list is sorted by proposed name."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    names = sorted(set(proposed))
    forms = [(i, attr.name, form) for i, attr in enumerate(catalogue) for form in (attr.name, *attr.aliases)]
    form_index = _Index([form for _, _, form in forms], threshold)
    resolved: dict[str, Match] = {}
    unmatched: list[str] = []
    for name in names:
        hit = _best_catalogue_match(name, forms, form_index, threshold) if normalized_key(name) else None
        if hit is None:
            unmatched.append(name)
        else:
            resolved[name] = Match(name, hit.canonical, hit.kind, hit.score, hit.matched_form)

    # Cluster the unmatched names: connected components of the "score >= threshold" graph.
    keys = {n: normalized_key(n) for n in unmatched}
    live = [n for n in unmatched if keys[n]]
    parent = list(range(len(live)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    index = _Index(live, threshold)
    for i, a in enumerate(live):
        for j in index.candidates(a):
            if j > i and name_similarity(a, live[j]) >= threshold:
                ri, rj = find(i), find(j)
                if ri != rj:
                    parent[max(ri, rj)] = min(ri, rj)

    clusters: dict[int, list[str]] = {}
    for i, n in enumerate(live):
        clusters.setdefault(find(i), []).append(n)
    groups = [*clusters.values(), *([n] for n in unmatched if not keys[n])]
    for members in groups:
        head = min(members, key=lambda n: (keys[n], clean(n), n))
        canonical = clean(head) or head
        for n in members:
            if n == head:
                resolved[n] = Match(n, canonical, "new", 1.0 if keys[n] else 0.0, "")
            else:
                resolved[n] = Match(n, canonical, "cluster", name_similarity(n, head), head)
    return [resolved[n] for n in names]
