"""``prefdisco env serve``: PrefDisco's RL environment as an OpenEnv server (``env/openenv.py``, the ``openenv``
extra), bound to 127.0.0.1 unless ``--host`` says otherwise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from prefdisco.cli_paths import CheckedGroup
from prefdisco.errors import UserError

console = Console()

SERVE_HELP = """Serve PrefDisco's discovery episode as an OpenEnv environment (reset / step / state; the WebSocket
session /ws holds a dialogue; binds to 127.0.0.1 unless --host says otherwise). SCENARIOS is a benchmark folder,
scenarios file or release file (default: the packaged demo scenarios). With --sessions FILE and --arm an episode is
a session of that file (prefdisco sessions) on SCENARIOS: K problems with one person, one reward per problem. Needs
the openenv extra (openenv-core)."""


def _settings(text: str | None, where: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise UserError(f"{where}: expected a JSON object, got {text!r} ({err.msg})") from None
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected a JSON object, got {text!r}")
    return value


def _weights(pairs: list[str] | None) -> dict[str, float] | None:
    if not pairs:
        return None
    weights: dict[str, float] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        try:
            weights[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise UserError(f"--reward: expected NAME=NUMBER (w_pref, w_correct, ...), got {pair!r}")
    return weights


def serve_command(
    scenarios: Annotated[
        Path | None, typer.Argument(help="benchmark folder, scenarios.jsonl or release file [default: demo]")
    ] = None,
    user_model: Annotated[str, typer.Option(help="the simulated user, provider/name")] = "",
    judge_model: Annotated[str, typer.Option(help="the judge (also correctness and the audit), provider/name")] = "",
    host: Annotated[str, typer.Option(help="interface to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    max_questions: Annotated[int, typer.Option(help="the question budget (0..5)")] = 5,
    user_type: Annotated[str, typer.Option(help="the simulated user (prefdisco eval --user-type)")] = "passive",
    ask: Annotated[
        str,
        typer.Option(
            "--ask",
            "--protocol",
            help="the ask channel: text (QUESTION: / ANSWER:) or tools (an ask_user call); --protocol is its older "
            "name",
        ),
    ] = "text",
    judge: Annotated[str, typer.Option(help="per_criterion or structured")] = "per_criterion",
    preset: Annotated[str, typer.Option(help="the prompt preset (default, paper)")] = "default",
    pushback: Annotated[int, typer.Option(help="turns of pushback after the final answer")] = 0,
    user_retry: Annotated[int, typer.Option(help="redraws of a flagged user reply (0..3)")] = 0,
    audit: Annotated[bool, typer.Option(help="audit the simulated user's turns")] = True,
    reward: Annotated[
        list[str] | None, typer.Option(help="a reward weight NAME=NUMBER (w_pref, w_correct, w_questions, ...)")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="the calls' seeds, as prefdisco eval --seed")] = None,
    train_fraction: Annotated[float | None, typer.Option(help="split the benchmark by problem")] = None,
    split_seed: Annotated[int, typer.Option(help="the split's seed")] = 0,
    split: Annotated[str | None, typer.Option(help="play only this side of the split: train or eval")] = None,
    masked_reward: Annotated[float, typer.Option(help="the reward of a masked episode")] = 0.0,
    user_config: Annotated[str | None, typer.Option(help="the user's generation settings, JSON")] = None,
    judge_config: Annotated[str | None, typer.Option(help="the judge's generation settings, JSON")] = None,
    max_sessions: Annotated[int, typer.Option(min=1, help="concurrent WebSocket sessions")] = 64,
    sessions: Annotated[
        Path | None, typer.Option(help="a session file (prefdisco sessions): an episode is one of its sessions")
    ] = None,
    arm: Annotated[str | None, typer.Option(help="with --sessions: cold, carry_transcript or carry_notes")] = None,
) -> None:
    from prefdisco.annotate.serve_options import LOCAL_HOSTS, check_port

    try:
        from prefdisco.env.openenv import make_app, serve
    except ImportError as err:
        raise UserError(f"env serve needs openenv-core: pip install -e '.[openenv]' ({err})") from None
    check_port(host, port)  # a busy port fails before the scenarios are read
    app = make_app(
        scenarios,
        user_model or None,
        judge_model or None,
        sessions=sessions,
        arm=arm,
        train_fraction=train_fraction,
        split_seed=split_seed,
        split=split,
        masked_reward=masked_reward,
        max_sessions=max_sessions,
        max_questions=max_questions,
        user_type=user_type,
        ask=ask,
        judge=judge,
        preset=preset,
        pushback=pushback,
        user_retry=user_retry,
        audit=audit,
        reward=_weights(reward),
        seed=seed,
        user_config=_settings(user_config, "--user-config"),
        judge_config=_settings(judge_config, "--judge-config"),
    )
    if host not in LOCAL_HOSTS:
        console.print(f"[yellow]warning:[/] binding to {host}: the environment is reachable from other machines")
    console.print(f"OpenEnv server on http://{host}:{port} (WebSocket ws://{host}:{port}/ws; Ctrl+C to stop)")
    serve(app, host, port)


def register(app: typer.Typer) -> None:
    """Add the ``env`` group (``env serve``) to ``app``."""
    env = typer.Typer(
        name="env", help="PrefDisco's RL environment on the RL hubs.", no_args_is_help=True, cls=CheckedGroup
    )
    env.command("serve", help=SERVE_HELP)(serve_command)
    app.add_typer(env, name="env")
