"""The gymnasium ids of PrefDisco's environments and their registration (``import prefdisco.env`` registers them).

The entry points are strings: registering imports none of the environments, so importing the package (the
``prefdisco`` command line does, for ``prefdisco env serve``) stays light; gymnasium imports an environment's module
when ``gymnasium.make`` first asks for it.
"""

from __future__ import annotations

import gymnasium

ENV_ID = "PrefDisco-v0"
SESSION_ENV_ID = "PrefDiscoSession-v0"
"""A session of K problems with one person (``env/gym_session.py``)."""


def register_env() -> None:
    """Register ``PrefDisco-v0`` and ``PrefDiscoSession-v0`` with gymnasium (once)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="prefdisco.env.gym:PrefDiscoEnv")
    if SESSION_ENV_ID not in gymnasium.registry:
        gymnasium.register(id=SESSION_ENV_ID, entry_point="prefdisco.env.gym_session:PrefDiscoSessionEnv")
