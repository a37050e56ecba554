"""USD prices of model tokens, for the dry run's estimate and the results' ``cost_usd``.

Without ``--prices`` the packaged table (``data/prices.json``: the providers' list prices per million input and
output tokens on its ``as_of`` date, for common models) is used; ``--prices FILE`` (``{"provider/model":
{"input": USD per 1M, "output": USD per 1M}}``, optionally ``cached_input`` and ``cache_write``) adds models or
overrides the table's. Cached input is priced at its own rate: a model's ``cached_input`` (a prompt prefix read from
the provider's cache) and ``cache_write`` (written to it, where billed), else its provider's share of the input price
(the table's ``cache_rates``, dated ``cache_as_of``), else the input price (``cost_usd``). A dated snapshot
(``openai/gpt-4.1-2025-04-14``, ``anthropic/claude-sonnet-4-20250514``) takes its family's price; the embedded
model (``prefdisco/…``) and inspect's ``mockllm/…`` cost nothing. Any other model has no price: its USD shows
``—`` and :func:`price_lines` says how to give one. A call sent through its provider's batch API (``--batch``) is
billed at the provider's batch share of every rate (the table's ``batch_rates``, dated ``batch_as_of``;
``batch_share``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from prefdisco.errors import UserError

PACKAGED = "prices.json"
_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
HINT = '--prices FILE with {"MODEL": {"input": USD per 1M tokens, "output": USD per 1M tokens}}'


@cache
def packaged() -> dict[str, Any]:
    """The packaged table: ``as_of``, ``source``, ``free`` (model prefix → why) and ``models``."""
    return json.loads((files("prefdisco") / "data" / PACKAGED).read_text(encoding="utf-8"))


class Prices(dict[str, dict[str, float]]):
    """Model name → ``{"input", "output"}`` USD per 1M tokens. ``get`` also finds a dated snapshot's family
    and the free local models; ``source`` says where a price comes from."""

    def __init__(self, entries: dict[str, dict[str, float]], sources: dict[str, str]) -> None:
        super().__init__(entries)
        self.sources = sources

    def _key(self, model: str) -> str | None:
        base = _DATED.sub("", model)
        for name in (model, base, f"{base}-0", f"{base}-latest"):
            if name in self:
                return name
        return None

    def get(self, model: str, default: Any = None) -> Any:
        key = self._key(model or "")
        if key is not None:
            return self[key]
        if _free(model or ""):
            return {"input": 0.0, "output": 0.0, "cached_input": 0.0, "cache_write": 0.0}
        return default

    def source(self, model: str) -> str | None:
        """``--prices FILE``, ``the packaged table of DATE``, ``free: why`` or None (no price)."""
        key = self._key(model)
        if key is not None:
            return self.sources[key]
        why = _free(model)
        return f"free: {why}" if why else None


def _free(model: str) -> str | None:
    return next((why for prefix, why in packaged()["free"].items() if model.startswith(prefix)), None)


CACHED_KEYS = ("cached_input", "cache_write")


def with_cache_rates(model: str, entry: dict[str, float]) -> dict[str, float]:
    """``entry`` with its ``cached_input`` and ``cache_write`` rates: its own, else its provider's share of the input
    price (``cache_rates``), else the input price."""
    rates: dict[str, Any] = next(
        (r for prefix, r in packaged().get("cache_rates", {}).items() if model.startswith(prefix)), {}
    )
    out = {"input": float(entry["input"]), "output": float(entry["output"])}
    for key in CACHED_KEYS:
        out[key] = float(entry[key]) if key in entry else out["input"] * float(rates.get(key, 1.0))
    return out


def cost_usd(price: dict[str, float], n_in: int, n_out: int, cache_read: int = 0, cache_write: int = 0) -> float:
    """USD of one role's tokens at ``price`` (USD per 1M): fresh input, output, cached input read and written."""
    rates = (price["input"], price["output"], price.get("cached_input", price["input"]))
    total = n_in * rates[0] + n_out * rates[1] + cache_read * rates[2]
    return (total + cache_write * price.get("cache_write", price["input"])) / 1_000_000


def load_prices(path: str | Path) -> dict[str, dict[str, float]]:
    """A ``--prices`` file: ``{"provider/model": {"input": USD per 1M input tokens, "output": USD per 1M output}}``."""
    file = Path(path)
    try:
        data = json.loads(file.read_text())
    except FileNotFoundError as e:
        raise UserError(f"--prices {file}: file not found") from e
    except json.JSONDecodeError as e:
        raise UserError(f"--prices {file}: not valid JSON (line {e.lineno}: {e.msg})") from e
    if not isinstance(data, dict):
        raise UserError(f"--prices {file}: expected an object keyed by model name")
    for model, entry in data.items():
        keys = ("input", "output", *(k for k in CACHED_KEYS if isinstance(entry, dict) and k in entry))
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), int | float) and entry[k] >= 0 for k in keys
        ):
            raise UserError(
                f"--prices {file}: {model}: expected {{'input': USD/1M tokens, 'output': USD/1M tokens}} "
                "(optionally 'cached_input' and 'cache_write', USD/1M tokens)"
            )
    return {m: with_cache_rates(m, e) for m, e in data.items()}


BATCH_PROVIDERS = ("openai", "anthropic", "google", "grok", "together")
"""The providers whose inspect model API sends ``batch`` calls through a batch API (others ignore it); the table's
``batch_rates`` price the first three."""


def sent_by_batch(model: str) -> bool:
    """Whether inspect sends a ``batch`` call of ``model`` through its provider's batch API."""
    return model.split("/", 1)[0] in BATCH_PROVIDERS


def batch_share(model: str) -> float | None:
    """The share of its standard rates a call of ``model`` sent through its provider's batch API is billed at (the
    packaged ``batch_rates``: OpenAI, Anthropic, Google); None: inspect has no batch API for it priced here, so such a
    call is billed in full."""
    rates = packaged().get("batch_rates", {})
    return next((float(r["share"]) for prefix, r in rates.items() if model.startswith(prefix)), None)


def prices(path: str | Path | None = None) -> Prices:
    """The packaged table, with the models of the ``--prices`` file ``path`` (if any) added over it."""
    table = packaged()
    entries = {m: with_cache_rates(m, p) for m, p in table["models"].items()}
    sources = dict.fromkeys(entries, f"the packaged table of {table['as_of']}")
    if path is not None:
        given = load_prices(path)
        entries.update(given)
        sources.update(dict.fromkeys(given, f"--prices {path}"))
    return Prices(entries, sources)


def price_lines(book: Prices, models: Iterable[str]) -> list[str]:
    """What each of ``models`` costs and where the price comes from (the models without a price: ``missing``)."""
    lines = []
    for model in dict.fromkeys(models):
        price, source = book.get(model), book.source(model)
        if price is None:
            continue
        if source and source.startswith("free"):
            lines.append(f"prices: {model} {source}")
        else:
            lines.append(f"prices: {model} ${price['input']:g} in / ${price['output']:g} out per 1M tokens ({source})")
    return lines


def missing(book: dict[str, dict[str, float]], models: Iterable[str]) -> list[str]:
    """The models among ``models`` without a price, in order."""
    return [m for m in dict.fromkeys(models) if book.get(m) is None]


def missing_line(book: dict[str, dict[str, float]], models: Iterable[str]) -> str | None:
    """One line for the models without a price (their USD shows —) and how to give one; None when all have one."""
    unknown = missing(book, models)
    if not unknown:
        return None
    return f"no price for {', '.join(unknown)}: its USD shows — and is not summed; give {HINT}"
