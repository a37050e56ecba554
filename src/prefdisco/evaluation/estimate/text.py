"""The dry run's text (``prefdisco eval --dry-run``): a run's estimate (``estimate/plan.py``) as a table per role."""

from __future__ import annotations

from prefdisco.evaluation.estimate.plan import PlanLine, RunEstimate


def render_estimate(estimate: RunEstimate) -> str:
    """The dry-run's text: ``N model calls`` first, then the table per role, then the notes."""
    lines = estimate.lines
    total = PlanLine(
        role="total",
        part="",
        model="",
        calls=estimate.calls,
        input_tokens=sum(ln.input_tokens for ln in lines),
        output_tokens=sum(ln.output_tokens for ln in lines),
        bound=None if any(ln.bound is None for ln in lines) else sum(ln.bound or 0 for ln in lines),
        usd=sum(ln.usd or 0.0 for ln in lines),
    )
    rows = [["role", "part", "model", "calls", "input tokens", "output tokens", "bound", "USD"]]
    for ln in [*lines, total]:
        rows.append([ln.role, ln.part, ln.model, *map(str, (ln.calls, ln.input_tokens, ln.output_tokens))])
        rows[-1] += ["none" if ln.bound is None else str(ln.bound), "—" if ln.usd is None else f"{ln.usd:.4f}"]
    rows[-1][-1] = total_usd(lines)
    rows = [row if estimate.priced else row[:-1] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    table = [
        "  ".join(c.rjust(w) if i >= 3 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in rows
    ]
    return "\n".join([f"{estimate.calls} model calls", *table, *(f"- {note}" for note in estimate.notes)])


def total_usd(lines: list[PlanLine]) -> str:
    """The total's USD cell: the sum where every line has a price, ``unknown`` where none has, and the known part
    as a lower bound (``≥ 1.2345``) where some have none: never a $0.0000 for calls nobody priced."""
    known = [ln.usd for ln in lines if ln.usd is not None]
    if not known and lines:
        return "unknown"
    if len(known) < len(lines):
        return f"≥ {sum(known):.4f}"
    return f"{sum(known):.4f}"
