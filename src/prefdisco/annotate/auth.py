"""Who is annotating: annotator names, optional access tokens, and the signed session cookie.

Tokens are given at start-up (``--token NAME=TOKEN``, repeated, or a tokens file with one ``NAME=TOKEN`` per
line; blank lines and ``#`` comments are ignored). When any are configured only those annotators may log in.
A token is only ever compared (in constant time): it is never rendered, logged, echoed in an error, or stored.
After login the browser holds a cookie with the annotator's name signed by a key drawn at start-up, so a
server restart simply asks annotators to log in again; their labels stay in the database.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from pathlib import Path

from prefdisco.errors import UserError

NAME_PATTERN = re.compile(r"^[\w][\w .'@-]{0,63}$")
NAME_RULE = "1-64 letters, digits, spaces or . ' @ - _ (starting with a letter, digit or _)"


def valid_name(name: str) -> bool:
    return bool(NAME_PATTERN.fullmatch(name)) and name == name.strip()


class Tokens:
    """Annotator name -> access token. Its repr never shows a token."""

    def __init__(self, tokens: dict[str, str] | None = None) -> None:
        self._tokens = dict(tokens or {})

    def __bool__(self) -> bool:
        return bool(self._tokens)

    def __repr__(self) -> str:
        return f"Tokens(annotators={sorted(self._tokens)})"

    @property
    def annotators(self) -> list[str]:
        return sorted(self._tokens)

    def allows(self, name: str, token: str) -> bool:
        """True when no tokens are configured, or ``token`` is ``name``'s token."""
        if not self._tokens:
            return True
        expected = self._tokens.get(name)
        # Compare against something even for unknown names, so timing does not reveal which names exist.
        ok = hmac.compare_digest(token.encode(), (expected or secrets.token_hex(16)).encode())
        return ok and expected is not None

    def permits(self, name: str) -> bool:
        return not self._tokens or name in self._tokens


def parse_tokens(specs: list[str], tokens_file: Path | None = None) -> Tokens:
    """Tokens from ``--token NAME=TOKEN`` options and an optional file. Errors never quote a token."""
    tokens: dict[str, str] = {}
    entries = [(f"--token #{n}", spec) for n, spec in enumerate(specs, start=1)]
    if tokens_file is not None:
        path = Path(tokens_file)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise UserError(f"{path}: cannot read the tokens file ({e.__class__.__name__})") from None
        entries += [
            (f"{path} line {n}", line.strip())
            for n, line in enumerate(lines, start=1)
            if line.strip() and not line.strip().startswith("#")
        ]
    for where, spec in entries:
        name, sep, token = spec.partition("=")
        name, token = name.strip(), token.strip()
        if not sep or not token:
            raise UserError(f"{where}: expected NAME=TOKEN with a non-empty token")
        if not valid_name(name):
            raise UserError(f"{where}: annotator name must be {NAME_RULE}")
        if name in tokens:
            raise UserError(f"{where}: annotator {name!r} has a token already")
        tokens[name] = token
    return Tokens(tokens)


class CookieSigner:
    """Signs annotator names for the session cookie with a key drawn when the server starts."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)

    def sign(self, name: str) -> str:
        encoded = base64.urlsafe_b64encode(name.encode()).decode().rstrip("=")
        return f"{encoded}.{self._mac(encoded)}"

    def unsign(self, value: str | None) -> str | None:
        if not value or "." not in value:
            return None
        encoded, mac = value.rsplit(".", 1)
        if not hmac.compare_digest(mac, self._mac(encoded)):
            return None
        try:
            name = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        return name if valid_name(name) else None

    def _mac(self, encoded: str) -> str:
        return hmac.new(self._key, encoded.encode(), hashlib.sha256).hexdigest()
