"""Python's garbage collector tuned for an eval-set: fewer, cheaper pauses of the event loop.

One inspect process runs every call of a run on one event loop. Python's cyclic collector stops that loop while it
runs, and with thousands of samples in flight its full (oldest-generation) collections scan a heap of millions of
objects: measured at 300 scenarios x 3 conditions against the mock server (1 s latency, 64 connections,
``benchmarks/slot_trace.py``), 22 full collections took 14 s of a 122 s run, the longest 1.05 s, while every
response waiting to be read waited too. Each call then held its connection slot 1.14 s for the server's 1.0 s.

``tuned_collector`` (around the eval-set, ``evalset.py``):

* **freezes** what the process holds before the run (imports, the scenarios, the models): the collector never
  scans those objects again during the run. It freezes without a full collection first: in a process that lives
  on after a run (a notebook, a Ray worker taking a second shard, the test suite) that collection scanned the whole
  heap at every run's start (0.4 s a run measured in the test session); garbage frozen with the rest is only
  kept until the run ends, when it is unfrozen and collected as usual;
* raises the youngest generation's threshold from 700 to ``YOUNG_THRESHOLD`` allocations, so young collections,
  and with them the older ones they trigger, run about thirty times less often.

Cycles are still collected, only later; memory is not held longer than the few seconds between collections. On
exit the previous thresholds come back and the frozen objects are unfrozen. Measured in the same setting: the
collector's pauses fell from 16.7 s to 3.2 s, a call's slot time from 1.14 s to 1.07 s, and the scheduling
efficiency at 1,000 x 3 rose from 0.733 to 0.879 (``docs/scale.md``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 20_000
"""Allocations (less deallocations) of container objects between two young collections (Python's default: 700)."""


@contextmanager
def tuned_collector() -> Iterator[None]:
    """Run the block with the collector tuned for an eval-set (module docstring); restored afterwards."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def release_memory() -> None:
    """Collect every cycle now and hand the C allocator's free memory back to the system (glibc's ``malloc_trim``;
    elsewhere the collection only). Between two eval-sets of one process (``evaluation/scaleout/blocks.py``): the
    next ``tuned_collector`` freezes whatever the process holds when it starts, so the cyclic garbage the tuned
    collector had not yet reached from the eval-set before (its tasks, samples and scores) would be frozen with it
    and kept for the whole next eval-set, one block's worth more at every block (measured: about 125 MB a block of
    1,000 scenarios × 3 conditions; flat with this call between blocks, ``docs/scale.md``)."""
    gc.collect()
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        trim = getattr(libc, "malloc_trim", None)
    except OSError:
        trim = None
    if trim is not None:
        trim(0)
