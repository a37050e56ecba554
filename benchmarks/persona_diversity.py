"""Diversity of a persona library as the builder's sampler makes it (not a test).

    .venv/bin/python benchmarks/persona_diversity.py [--n 100] [--max-share 0.05] [--seed 0]

Builds a library of N personas (the paper's size is 100) through ``build_library`` with a scripted model
(tests/test_build_support.py) that fills in each blueprint, except that with probability ``--collapse`` it
ignores the blueprint and writes the stock persona LLMs drift to (a 34-year-old software engineer), so the
figures measure the blueprint sampler and the rejection rule against a known drift, not an LLM. Prints the
diversity report (distinct occupation-group × age-band × trait-pattern buckets, the largest bucket's share,
trait-pattern entropy, distinct occupation groups) and the rejections, with the bucket cap (``--max-share``)
and marginal caps (2× expected share) and
without them (no marginal caps, max share 1.0; duplicate names and occupations are still rejected), side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def library(n: int, max_share: float, seed: int, collapse: float, marginal: float | None) -> dict:
    import random

    from prefdisco.builder import personas as pl
    from prefdisco.builder.pool import Checkpoint, ModelPool, StepRunner
    from test_build_support import FakeBuilder, default_persona, fake_model

    rng = random.Random(seed)

    def drifting(fake, prompt, schema, k):
        reply = default_persona(fake, prompt, schema, k)
        if rng.random() < collapse:
            reply.update(age=34, occupation_group="engineering and technology", occupation=f"software engineer {k}")
        return reply

    fake = FakeBuilder({"persona": drifting})
    runner = StepRunner(pool=ModelPool([fake_model(fake)], seed=seed), checkpoint=Checkpoint(None))
    result = asyncio.run(
        pl.build_library(runner, pl.LibraryConfig(n=n, seed=seed, max_share=max_share, max_marginal_share=marginal))
    )
    groups = Counter(p.extra.get("occupation_group") for p in result.personas)
    share = max(groups.values()) / len(result.personas) if result.personas else 0.0
    return {
        "diversity": result.diversity,
        "rejections": result.rejections,
        "calls": fake.total,
        "largest_group_share": share,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--max-share", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--collapse", type=float, default=0.5, help="share of replies that ignore the blueprint")
    args = parser.parse_args()
    with_rejection = library(args.n, args.max_share, args.seed, args.collapse, 2.0)
    without = library(args.n, 1.0, args.seed, args.collapse, None)
    print(f"with rejection (max share {args.max_share}): {json.dumps(with_rejection)}")
    print(f"without rejection: {json.dumps(without)}")
    for label, run in (("", with_rejection), ("_without_rejection", without)):
        d = run["diversity"]
        print(f"distinct_buckets{label}: {d['distinct_buckets']} of {d['n']}")
        print(f"max_bucket_share{label}: {d['max_bucket_share']:.3f}")
        print(f"distinct_trait_patterns{label}: {d['distinct_trait_patterns']}")
        print(f"distinct_occupation_groups{label}: {d['distinct_occupation_groups']}")
        print(f"largest_occupation_group_share{label}: {run['largest_group_share']:.3f}")
        print(
            f"trait_pattern_entropy_bits{label}: {d['trait_pattern_entropy_bits']}"
            f" of {d['max_trait_pattern_entropy_bits']}"
        )


if __name__ == "__main__":
    main()
