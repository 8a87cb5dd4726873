"""The API server's key: generated once, kept in the OS keyring (never in a file), shown
to the user once when it is made."""

from __future__ import annotations

import secrets as random

from desktop_app.core.config import secrets

KEY_REF = "api-server"
PREFIX = "dak-"


def server_key() -> tuple[str, bool]:
    """The stored key, or a new one stored now: (key, made_now). Raises the keyring's
    ``SecretsError`` when there is no keyring (then pass a key or choose no key)."""
    existing = secrets.get_api_key(KEY_REF)
    if existing:
        return existing, False
    key = PREFIX + random.token_urlsafe(32)
    secrets.set_api_key(KEY_REF, key)
    return key, True
