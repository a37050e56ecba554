"""What every test shares: the offline environment, the shared data folder, the planted worlds (built once per test
session, whichever worker asks first), and the rules that keep two pytest-xdist workers out of each other's way.

**The suite's time budget.** ``make test`` runs the whole suite on both cores (``pytest -n 2 --dist loadgroup``);
``make test-fast`` leaves out the embedded-model, browser, Ray and ``slow`` tests for the edit loop. A new end-to-end
test either reads a world below (``world``) or is marked ``slow``; docs/testing.md has the figures and the rules.

**Two workers side by side.** Each worker has its own inspect cache (``INSPECT_CACHE_DIR``) and temporary folders;
ports come from the OS; the embedded model's tests share one xdist group (``llama``: two llama.cpp jobs slow each other
20-50 times), as do the browser tests (``browser``) and the Ray tests (``ray``), and those groups are handed out
first (they are the longest units of work). Under xdist llama.cpp runs on one thread (``PREFDISCO_THREADS=1``), so
it never spins against the other worker's core.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PREFDISCO_SHARED", REPO.parent / "shared"))

# Tests never reach the network: Hugging Face and inspect stay offline.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("INSPECT_DISPLAY", "none")

WORKER = os.environ.get("PYTEST_XDIST_WORKER")
"""``gw0``, ``gw1``, … under pytest-xdist; None in a plain run."""
if WORKER:
    os.environ.setdefault("PREFDISCO_THREADS", "1")

GROUPS = {"embedded": "llama", "browser": "browser", "ray": "ray"}
"""Marker → the xdist group that keeps its tests on one worker, one at a time."""
WORLD_GROUPS = {
    "leaderboard_runs": "leaderboard-world",
    "harms_runs": "harms-world",
    "transfer_runs": "transfer-world",
    "play_runs": "play-world",
}
"""World fixture → the xdist group of the tests that read it: the worker that builds a world runs its readers, so
the other worker never waits on the world's lock (a browser test, in its own group, may). A test that reads a world
is also ``slow`` (a world takes seconds to build): ``make test-fast`` builds none."""


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each grouped marker's tests, then each world's readers, join their xdist group (``--dist loadgroup`` sends a
    group to one worker, and hands out the largest groups first); a module's own ``xdist_group`` mark comes first.
    A world's readers are marked ``slow``."""
    for item in items:
        world = next((g for name, g in WORLD_GROUPS.items() if name in item.fixturenames), None)
        if world:
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("xdist_group"):
            continue
        group = next((g for marker, g in GROUPS.items() if item.get_closest_marker(marker)), None)
        if group or world:
            item.add_marker(pytest.mark.xdist_group(group or world))
    if WORKER:
        # xdist hands out the groups first (largest first), then the single tests in collection order: the slow
        # single tests go first among those, so the last tests of each worker are short ones and both cores end
        # together (a 20 s test collected last left one core idle for its length). Same order on every worker.
        items.sort(key=lambda i: not (i.get_closest_marker("slow") and not i.get_closest_marker("xdist_group")))


def pytest_collection_finish(session: pytest.Session) -> None:
    """The garbage collector, tuned for a long session: the imports and the collected tests are frozen (never scanned
    again), and collections run less often (20,000 allocations between young ones, fewer full ones): its pauses were
    7% of a worker's time, about 2% after. Under ``--dist loadgroup`` every grouped test must carry its group in its
    node id (how xdist sends a group to one worker): pytest 9.2 stopped that silently, and the embedded-model tests
    then ran on both cores at once."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 50)
    if not (WORKER and session.config.getvalue("loadgroup")):
        return
    lost = [i.nodeid for i in session.items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if lost:
        raise pytest.UsageError(
            f"pytest-xdist did not group {len(lost)} test(s) (first: {lost[0]}): this pytest "
            f"{pytest.__version__} and pytest-xdist do not work together; install the versions pyproject.toml pins"
        )


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The garbage of a whole session is left to the end of the process. With the collections above, a worker ends
    holding millions of unreachable objects (2.8 million on the busier worker of a full run); freeing them took
    pytest's last collection 5-6 s, and the interpreter's shutdown more, so a worker took over the 10 s pytest-xdist
    waits for it before killing it, every run. Frozen here, the last collections skip them, and the process's end
    returns the memory at once. What that gives up: pytest's end-of-session look for an exception raised while
    garbage was freed (a warning, never a failure; every test's own such exceptions are still reported with it)."""
    gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def _own_inspect_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every worker (and a plain run) gets an inspect response cache of its own, never the user's: a test that
    names its own (``monkeypatch.setenv``) still does."""
    patch = pytest.MonkeyPatch()
    patch.setenv("INSPECT_CACHE_DIR", str(tmp_path_factory.mktemp("inspect-cache")))
    yield
    patch.undo()


RETRY_BACKOFF_S = 0.05
"""inspect's wait between two tries of a failed call in a test run in this process (``_short_retry_backoff``)."""


@pytest.fixture(scope="session", autouse=True)
def _short_retry_backoff() -> Iterator[None]:
    """inspect waits 3-6 s before it retries a failed call, and longer each time (``ModelAPI.retry_wait`` None:
    its default backoff); in a test that wait is idle time (the sessions run on the fault mock spent 9 of its 17 s
    in it). Every model API of a test run in this process waits ``RETRY_BACKOFF_S`` instead, unless it names its
    own wait: which calls are retried and how often is what the tests check, never how long inspect sleeps. A test
    that starts ``prefdisco`` in a process of its own keeps inspect's backoff."""
    from inspect_ai.model import ModelAPI
    from tenacity import wait_fixed

    patch = pytest.MonkeyPatch()
    patch.setattr(ModelAPI, "retry_wait", lambda self: wait_fixed(RETRY_BACKOFF_S))
    yield
    patch.undo()


@pytest.fixture(scope="session", autouse=True)
def _cli_built_once() -> Iterator[None]:
    """typer turns an app into its click command on every ``CliRunner().invoke(app, …)``, reading each command's
    signature again: 9% of the edit loop's time went there. Each app's click command is built
    once per worker and reused (a click command keeps no state between invocations; each gets a fresh context)."""
    import typer.testing

    built: dict[tuple[int, int, int], tuple[object, object]] = {}
    build = typer.testing._get_command

    def command(app):  # type: ignore[no-untyped-def]
        # an app given more commands later is built again; the app is kept, so its id is never reused
        key = (id(app), len(app.registered_commands), len(app.registered_groups))
        if key not in built:
            built[key] = (app, build(app))
        return built[key][1]

    patch = pytest.MonkeyPatch()
    patch.setattr(typer.testing, "_get_command", command)
    yield
    patch.undo()


@pytest.fixture(autouse=True)
def _signals_restored() -> Iterator[None]:
    """No test leaves a process-wide signal handler behind. verifiers' Environment installs its own SIGINT and
    SIGTERM handlers when it is made, and its server ignores SIGINT: a process started later by another test on that
    worker inherited the ignored SIGINT, and the Ctrl-C test's run never saw its Ctrl-C (2 runs in 3 failed)."""
    import signal

    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in kept.items():
        if signal.getsignal(sig) is not handler and handler is not None:
            signal.signal(sig, handler)


def shared_missing() -> str | None:
    """The one line that stops the suite when the shared data folder is not there (None when it is)."""
    if (SHARED / "data").is_dir():
        return None
    return (
        f"the tests need the shared data folder, not found at {SHARED / 'data'}: put the shared folder beside the "
        "repository or set PREFDISCO_SHARED"
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop before collecting anything when the shared data is missing (every loader and metric test reads it): one
    line and exit 2, not a hundred failures."""
    missing = shared_missing()
    if missing and not WORKER:
        pytest.exit(missing, returncode=2)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    missing = shared_missing()
    if missing:
        raise RuntimeError(missing)
    return SHARED


@pytest.fixture(scope="session")
def shared_benchmarks(shared_dir: Path) -> Path:
    return shared_dir / "data" / "benchmarks"


class World:
    """Planted worlds built once per test session and read by every test that needs them.

    ``get(name, make)`` builds ``name`` with ``make(folder)`` the first time any worker asks (under a file lock in
    the folder every xdist worker shares), and afterwards returns what ``make`` returned — a path inside the folder —
    to every worker, without building again. A build has its own inspect cache (``folder/.cache``). A build that
    failed leaves nothing behind: the next ask builds again (and fails the same way, in that test).

    A world is read-only to its readers: a test that runs more beside a world writes into its own ``tmp_path``.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def get(self, name: str, make: Callable[[Path], Path]) -> Path:
        from filelock import FileLock

        folder = self.root / name
        built = self.root / f"{name}.built.json"
        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.root / f"{name}.lock")):
            if not built.is_file():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                patch = pytest.MonkeyPatch()
                patch.setenv("INSPECT_CACHE_DIR", str(folder / ".cache"))
                try:
                    made = Path(make(folder)).resolve()
                finally:
                    patch.undo()
                built.write_text(json.dumps({"path": str(made.relative_to(folder.resolve()))}))
            return folder / json.loads(built.read_text())["path"]


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The session's planted worlds (``World``), in the folder every worker of this session shares."""
    base = tmp_path_factory.getbasetemp()
    return World((base.parent if WORKER else base) / "worlds")


# ---- the planted worlds: each fixture hands out its world's runs, each built once per test session ----------------


@pytest.fixture(scope="session")
def transfer_runs(world: World) -> Callable[..., Path]:
    """``transfer_runs(kind, user_type=, epochs=)``: the sessions world's run of the ``kind`` assistant
    (``tests/transfer_world.py``)."""
    from transfer_world import shared_run

    return functools.partial(shared_run, world)


@pytest.fixture(scope="session")
def harms_runs(world: World) -> Callable[[str], Path]:
    """``harms_runs(kind)``: the harms world's run of the ``kind`` assistant (``tests/harms_world.py``)."""
    from harms_world import shared_run

    return functools.partial(shared_run, world)


@pytest.fixture(scope="session")
def leaderboard_runs(world: World) -> tuple[Path, int]:
    """The leaderboard world's folder (runs good, fair, poor and late) and the mock's port, part of every model's
    name (``tests/leaderboard_world.py``)."""
    from leaderboard_world import build

    folder = world.get("leaderboard", build)
    return folder, json.loads((folder / "port.json").read_text())["port"]


@pytest.fixture(scope="session")
def readme_demo(world: World) -> Path:
    """The folder the README's offline commands ran in (``tests/readme_world.py``): ``runs.json`` and the quick
    demo's ``prefdisco-demo-1``. Its readers need the embedded model, so they are one xdist group already."""
    from readme_world import build

    return world.get("readme-demo", build)


@pytest.fixture(scope="session")
def play_runs(world: World) -> Callable[..., Path]:
    """``play_runs(user=USER, name="sim")``: the play world's simulated run (``tests/play_world.py``), its folder
    named ``name``."""
    from play_world import shared_run

    return functools.partial(shared_run, world)
