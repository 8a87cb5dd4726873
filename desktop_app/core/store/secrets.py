"""API keys, only ever in the OS keyring (or an environment variable the user sets).

Never falls back to a file: when no keyring backend exists (common on headless Linux) the
caller gets ``KeyringUnavailableError`` saying so and pointing at the environment-variable route.
"""

from __future__ import annotations

import os

import keyring
from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

from desktop_app.core.errors import KeyringUnavailableError, SecretsError

SERVICE = "desktop-app"

_NO_BACKEND_HINT = (
    "Install and unlock a keyring (GNOME Keyring / KWallet on Linux), or put the key in an "
    "environment variable and set that variable's name on the endpoint in Settings."
)


def keyring_available() -> bool:
    """True if a real (not the 'fail') keyring backend is active."""
    backend = keyring.get_keyring()
    priority = getattr(backend, "priority", 0)
    return not type(backend).__module__.startswith("keyring.backends.fail") and priority > 0


def set_api_key(ref: str, key: str) -> None:
    try:
        keyring.set_password(SERVICE, ref, key)
    except NoKeyringError as exc:
        raise KeyringUnavailableError("No OS keyring is available to store the API key.",
                                      hint=_NO_BACKEND_HINT) from exc
    except KeyringError as exc:
        raise SecretsError(f"The keyring refused to store the key: {exc}",
                           hint="Unlock your keyring and try again.") from exc


def get_api_key(ref: str | None, env: str | None = None) -> str | None:
    """The key from the environment variable ``env`` or the keyring entry ``ref``."""
    if env and os.environ.get(env):
        return os.environ[env]
    if not ref:
        return None
    try:
        return keyring.get_password(SERVICE, ref)
    except NoKeyringError as exc:
        raise KeyringUnavailableError(f"No OS keyring is available to read the key '{ref}'.",
                                      hint=_NO_BACKEND_HINT) from exc
    except KeyringError as exc:
        raise SecretsError(f"The keyring could not read the key '{ref}': {exc}",
                           hint="Unlock your keyring and try again.") from exc


def delete_api_key(ref: str) -> None:
    try:
        keyring.delete_password(SERVICE, ref)
    except PasswordDeleteError:
        pass
    except NoKeyringError as exc:
        raise KeyringUnavailableError("No OS keyring is available.", hint=_NO_BACKEND_HINT) from exc
