"""The project's error tree. Every message says what happened and what to do about it.

Adapters convert library exceptions into these with ``raise ... from exc`` so callers (the
engine, the CLI, the UI) handle one family of errors and can show ``str(error)`` to a person.
"""

from __future__ import annotations

from pathlib import Path


class DesktopAppError(Exception):
    """Root of all errors raised on purpose by desktop-app.

    ``retryable`` tells the engine whether the same call may succeed if tried again
    (rate limits, timeouts) or is terminal (bad key, missing model file).
    """

    retryable: bool = False

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message} {hint}" if hint else message)


# --- configuration -------------------------------------------------------------------------
class ConfigError(DesktopAppError):
    """Settings or model configuration is missing or invalid."""


class UnknownModelError(ConfigError):
    """A model name or role that the ModelRegistry does not know."""


class SecretsError(ConfigError):
    """API keys could not be read or stored (for example, no OS keyring backend)."""


class KeyringUnavailableError(SecretsError):
    """No usable OS keyring backend exists on this machine."""


# --- storage -------------------------------------------------------------------------------
class StorageError(DesktopAppError):
    """The conversation store could not read or write."""


class DamagedDatabaseError(StorageError):
    """The database file at ``path`` is not a database SQLite can open (damaged)."""

    def __init__(self, message: str, path: Path, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.path = path


# --- LLM -----------------------------------------------------------------------------------
class LLMError(DesktopAppError):
    """A language-model call failed."""


class LLMConnectionError(LLMError):
    """The model server could not be reached."""

    retryable = True


class LLMAuthError(LLMError):
    """The server rejected the API key."""


class LLMTimeoutError(LLMError):
    """The model did not answer in time."""

    retryable = True


class LLMRateLimitError(LLMError):
    """The provider is rate limiting or out of quota."""

    retryable = True


class LLMModelNotFoundError(LLMError):
    """The server does not serve the requested model."""


class ContextOverflowError(LLMError):
    """The prompt does not fit the model's context window."""


class LLMBadOutputError(LLMError):
    """The model answered, but not in a usable shape (for example, no valid JSON)."""


class LLMProviderError(LLMError):
    """Any other error reported by the provider."""


class ToolCallsUnsupportedError(LLMProviderError):
    """The server refused a request because it offered tools (many Ollama and LM Studio
    models, llama.cpp's server without ``--jinja``, vLLM without a tool parser)."""


class ModelFileError(LLMError):
    """A local model file is missing, unreadable, corrupt or not a GGUF file."""


class BundledModelError(ModelFileError):
    """The bundled model could not be assembled (missing part or checksum mismatch)."""


class IncompatibleBuildError(LLMError):
    """The installed llama.cpp build would crash on this CPU."""


# --- tools ---------------------------------------------------------------------------------
class ToolError(DesktopAppError):
    """A tool could not run. The engine turns these into observations, never crashes."""


class ToolNotFoundError(ToolError):
    """The model asked for a tool that is not registered."""


class ToolArgumentError(ToolError):
    """The model gave a tool arguments that do not match its schema."""


class SandboxViolationError(ToolError):
    """A tool tried to reach outside the folder it is confined to."""
