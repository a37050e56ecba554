"""Anthropic's Message Batches API as the mock server (``tests/mock_openai.py``) speaks it: a batch object, ended at
once with every request succeeded, and its results as JSON lines, in the shapes the ``anthropic`` SDK reads
(``MessageBatch``, ``MessageBatchIndividualResponse``), so inspect's own ``AnthropicBatcher`` runs unchanged."""

from __future__ import annotations

import json
from typing import Any

CREATED_AT = "2026-12-05T00:00:00Z"


def batch_info(batch_id: str, n: int, base_url: str) -> dict[str, Any]:
    """A ``MessageBatch`` of ``n`` requests, every one succeeded, its results at ``…/results``."""
    return {
        "id": batch_id,
        "type": "message_batch",
        "processing_status": "ended",
        "request_counts": {"processing": 0, "succeeded": n, "errored": 0, "canceled": 0, "expired": 0},
        "created_at": CREATED_AT,
        "ended_at": CREATED_AT,
        "expires_at": "2026-12-06T00:00:00Z",
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": f"{base_url}/v1/messages/batches/{batch_id}/results",
    }


def batch_result(custom_id: str, message: dict[str, Any]) -> dict[str, Any]:
    """One request's result: the message it would have got alone."""
    return {"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}


def results_jsonl(results: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in results)
