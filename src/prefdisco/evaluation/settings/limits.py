"""Per-role connection caps: ``--user-max-connections N`` and ``--judge-max-connections N``.

inspect enforces ``max_connections`` per provider connection (``model_concurrency_key``), so when the model under
test, the simulated user and the judges point at one endpoint they share one pool, and a burst of judge calls
can hold every connection while dialogues wait. A cap here bounds the concurrent calls of one role across the
whole run, whatever endpoint it shares:

* ``user`` — every call on the ``user`` role (the simulated user's replies);
* ``judge`` — every call on a ``grader*`` role, together: the rubric judges of the panel (``grader``,
  ``grader_2``, …), the audit, the correctness grader and the targeted user's question mapper.

``RoleLimitedModel`` is the role's inspect ``Model`` whose ``generate`` holds a slot of an inspect
``concurrency`` context (``prefdisco-role-user`` / ``prefdisco-role-judge``, shown in inspect's status bar)
around the whole call. The slot is taken *outside* inspect's own connection slot, so inspect's retries (the
``@retry`` loop inside ``Model._generate``) and its provider pool both run inside it: a call that retries still
counts as one in flight, and a capped role never holds a provider connection while it waits for its cap. A
cache hit waits for a slot too, as it does for inspect's own connection slot (inspect reads its cache inside
it), but holds it only for the lookup, so a rerun that replays the cache makes no call and stays fast. The
context registry is inspect's own and reset per eval, so two runs in one process never share a cap.

Copies keep the class (``seeded_model`` and inspect's per-role ``copy`` use ``copy.copy``), so the trial-seeded
copies the solvers and the scorer make are capped too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from inspect_ai._util.notgiven import NOT_GIVEN, NotGiven
from inspect_ai.model import CachePolicy, ChatMessage, GenerateConfig, Model, ModelOutput, StreamHandler
from inspect_ai.tool import Tool, ToolChoice, ToolDef, ToolInfo, ToolSource
from inspect_ai.util import concurrency


def pool_of(role: str) -> str | None:
    """The pool a model role's calls count against: ``user``, ``judge`` (every ``grader*`` role) or None."""
    if role == "user":
        return "user"
    if role == "grader" or role.startswith("grader_"):
        return "judge"
    return None


def context_name(pool: str) -> str:
    """The inspect concurrency context of a pool."""
    return f"prefdisco-role-{pool}"


class RoleLimitedModel(Model):
    """A role model whose every ``generate`` holds one of ``limit`` slots of its pool's concurrency context."""

    pool: str
    limit: int

    @classmethod
    def of(cls, model: Model, pool: str, limit: int) -> RoleLimitedModel:
        """``model`` (its provider, config, role and base url) with its calls capped at ``limit`` in ``pool``."""
        if limit < 1:
            raise ValueError(f"a connection cap is at least 1, got {limit}")
        limited = cls(model.api, model.config, model.model_args)
        limited.__dict__.update(vars(model))
        limited.pool, limited.limit = pool, limit
        return limited

    async def generate(
        self,
        input: str | list[ChatMessage],
        tools: Sequence[Tool | ToolDef | ToolInfo | ToolSource] | ToolSource = [],  # noqa: B006 - inspect's default
        tool_choice: ToolChoice | None = None,
        config: GenerateConfig = GenerateConfig(),
        cache: bool | CachePolicy | NotGiven = NOT_GIVEN,
        on_stream: StreamHandler | None = None,
    ) -> ModelOutput:
        async with concurrency(context_name(self.pool), self.limit):
            return await super().generate(input, tools, tool_choice, config, cache, on_stream)


def limit_roles(roles: Mapping[str, Model], caps: Mapping[str, int | None]) -> dict[str, Model]:
    """``roles`` with each role whose pool has a cap in ``caps`` (pool → N; None or absent: uncapped) capped."""
    limited: dict[str, Model] = {}
    for role, model in roles.items():
        pool = pool_of(role)
        cap = caps.get(pool) if pool else None
        limited[role] = RoleLimitedModel.of(model, pool, cap) if pool and cap else model
    return limited
