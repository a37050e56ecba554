"""``eval.yaml``: the benchmark as an eval for inspect's registry and the Hub's eval results.

The Hub reads ``name``, ``description``, ``evaluation_framework`` (``inspect-ai``) and ``tasks`` (each an ``id``,
the ``config`` and ``split`` it reads, as a benchmark dataset's ``eval.yaml`` names them: a model's
``.eval_results/*.yaml`` refers to a task by its ``id``). The rest pins what a run of it loads: the inspect
``task`` (``prefdisco/prefdisco``) with its arguments, its ``version`` (the package's), the ``task_file``
(its path in the project's repository, the ``commit`` it was published from or, outside a checkout, the version,
``pinned_by`` saying which, and the file's sha256), and ``assets``: every file of the folder the task reads, each
by its sha256, with the build's ``content_hash``. ``docs/publish.md`` lists the fields.
"""

from __future__ import annotations

from typing import Any

import yaml  # type: ignore[import-untyped]

from prefdisco.publish.layout import bench_file
from prefdisco.publish.pin import TASK_NAME, sha256
from prefdisco.publish.publication import Publication


def eval_spec(pub: Publication) -> dict[str, Any]:
    pin = pub.pin
    tasks = [
        {
            "id": table.config.name if len(table.files) == 1 else f"{table.config.name}-{split}",
            "config": table.config.name,
            "split": split,
        }
        for table in pub.tables
        for split in table.files
    ]
    assets = [{"path": path, "sha256": sha256(data)} for path, data in sorted(pub.data.items())]
    assets += [{"path": path, "sha256": sha256(data)} for path, data in sorted(pub.bench_files.items())]
    task_file: dict[str, Any] = {"path": pin.path, "pinned_by": pin.pinned_by}
    task_file |= {"commit": pin.commit} if pin.commit else {"version": pin.version}
    task_file["sha256"] = pin.sha256
    return {
        "name": pub.title,
        "description": (
            "PrefDisco: does a model personalize its answer to a simulated person, with and without asking them "
            "questions? Scored by rubric (PrefAlign, NormAlign) and correctness."
        ),
        "evaluation_framework": "inspect-ai",
        "tasks": tasks,
        "task": TASK_NAME,
        "task_args": {"scenarios": "."},
        "version": pin.version,
        "package": {"name": "prefdisco", "version": pin.version},
        "task_file": task_file,
        "content_hash": pub.info.content_hash,
        "manifest": bench_file("manifest.json"),
        "assets": assets,
    }


def eval_text(pub: Publication) -> str:
    head = "# PrefDisco's task over this folder, pinned (docs/publish.md of PrefDisco lists the fields).\n"
    return head + yaml.safe_dump(eval_spec(pub), sort_keys=False, allow_unicode=True, width=1000)
