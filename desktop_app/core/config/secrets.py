"""API keys, only ever in the OS keyring (or an environment variable the user sets).

Never falls back to a file: when no keyring backend exists (common on headless Linux) the
caller gets ``KeyringUnavailableError`` saying so and pointing at the environment-variable route.
File-based backends (``keyrings.alt``: plaintext or weakly encrypted files) are refused for
storing keys, even when they are the active backend.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

import keyring
from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

from desktop_app.core.errors import KeyringUnavailableError, SecretsError


class KeyedEndpoint(Protocol):
    """Where an endpoint's key lives (``EndpointModelConfig`` has these)."""

    @property
    def api_key_ref(self) -> str | None: ...

    @property
    def api_key_env(self) -> str | None: ...


class HasEndpoints(Protocol):
    """Settings, as far as secrets care (no import of the settings module: it imports this
    one to move old plaintext keys into the keyring)."""

    @property
    def endpoints(self) -> Sequence[KeyedEndpoint]: ...

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


def _backends(backend: object) -> list[object]:
    """The backend and, for keyring's chainer, the backends it writes to."""
    return [backend, *getattr(backend, "backends", [])]


def _writes_files(backend: object) -> bool:
    return any(type(b).__module__.startswith("keyrings.alt") for b in _backends(backend))


def keyring_status() -> tuple[bool, str]:
    """Whether keys can be stored, and a sentence for the Settings dialog saying so."""
    backend = keyring.get_keyring()
    name = str(getattr(backend, "name", "") or type(backend).__name__)  # "SecretService Keyring"
    if _writes_files(backend):
        return False, (f"The active keyring ({name}) keeps keys in a file; desktop-app will "
                       f"not store keys there. {_NO_BACKEND_HINT}")
    if not keyring_available():
        return False, f"No OS keyring is available on this system. {_NO_BACKEND_HINT}"
    return True, f"API keys are stored in the OS keyring ({name})."


def env_var_for(ref: str) -> str:
    """The environment variable suggested for a key: ``DESKTOP_APP_KEY_<REF>``."""
    return "DESKTOP_APP_KEY_" + (re.sub(r"[^A-Za-z0-9]+", "_", ref).strip("_").upper() or "API")


_generation = 0


def generation() -> int:
    """Changes whenever this process stores or deletes a key (caches of keys compare it)."""
    return _generation


def _changed() -> None:
    global _generation
    _generation += 1


def set_api_key(ref: str, key: str) -> None:
    """Store ``key`` under ``ref`` in the OS keyring; never anywhere else."""
    try:
        _store_api_key(ref, key)
    finally:
        _changed()


def _store_api_key(ref: str, key: str) -> None:
    if _writes_files(keyring.get_keyring()):
        raise KeyringUnavailableError(
            "The active keyring keeps keys in a plain file, so desktop-app will not store "
            "the API key there.",
            hint=f"{_NO_BACKEND_HINT} For this key, e.g. {env_var_for(ref)}.")
    try:
        keyring.set_password(SERVICE, ref, key)
    except NoKeyringError as exc:
        raise KeyringUnavailableError(
            "No OS keyring is available to store the API key.",
            hint=f"{_NO_BACKEND_HINT} For this key, e.g. {env_var_for(ref)}.") from exc
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
        _delete_api_key(ref)
    finally:
        _changed()


def _delete_api_key(ref: str) -> None:
    try:
        keyring.delete_password(SERVICE, ref)
    except PasswordDeleteError:
        pass
    except NoKeyringError as exc:
        raise KeyringUnavailableError("No OS keyring is available.", hint=_NO_BACKEND_HINT) from exc


def known_secrets(settings: HasEndpoints) -> list[str]:
    """Every API key the configured endpoints use (to scrub them from exports and logs).

    Keys that cannot be read (no keyring) are simply not listed: this must never fail.
    """
    found: list[str] = []
    for endpoint in settings.endpoints:
        try:
            key = get_api_key(endpoint.api_key_ref, endpoint.api_key_env)
        except SecretsError:
            key = os.environ.get(endpoint.api_key_env or "") or None
        if key:
            found.append(key)
    return found


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (8+ characters) replaced by ``[REDACTED]``."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret and len(secret) >= 8:
            text = text.replace(secret, "[REDACTED]")
    return text
