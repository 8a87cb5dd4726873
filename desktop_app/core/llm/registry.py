"""ModelRegistry: named models with roles, created lazily (SPEC §2).

Entries know their abilities without loading anything, so listing models is instant; the
model itself (a llama.cpp context, an HTTP client) is built on first ``get``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from desktop_app.core.errors import ConfigError, UnknownModelError
from desktop_app.core.llm.base import LLM

ModelKind = Literal["bundled", "local", "endpoint", "custom"]


@dataclass
class ModelEntry:
    """What the registry knows about one model before it is loaded."""

    name: str
    kind: ModelKind
    factory: Callable[[], LLM]
    abilities: dict[str, bool]
    context_size: int
    roles: list[str] = field(default_factory=list)
    description: str = ""
    #: The configuration the model is built from (JSON), "" when unknown: a loaded model is
    #: kept across a settings change only when this is the same.
    config_key: str = ""
    #: The model file of a local model ("" otherwise): what its memory is estimated from.
    path: str = ""


class ModelRegistry:
    """Models by name and by role, with one default."""

    def __init__(self) -> None:
        self._entries: dict[str, ModelEntry] = {}
        self._instances: dict[str, LLM] = {}
        self._roles: dict[str, str] = {}
        self._default: str | None = None

    # --- building --------------------------------------------------------------------------
    def add(self, entry: ModelEntry, *, default: bool = False) -> None:
        if entry.name in self._entries:
            raise ConfigError(f"Two models are named '{entry.name}'.",
                              hint="Give every configured model a unique name in Settings.")
        self._entries[entry.name] = entry
        for role in entry.roles:
            self._roles.setdefault(role, entry.name)
        if default or self._default is None:
            self._default = entry.name

    def register(self, name: str, llm: LLM, *, roles: list[str] | tuple[str, ...] = (),
                 default: bool = False) -> None:
        """Register an already built model (tests, fakes, plugins)."""
        self.add(ModelEntry(name=name, kind="custom", factory=lambda: llm,
                            abilities=dict(llm.abilities), context_size=llm.context_size,
                            roles=list(roles), description=llm.model_id), default=default)
        self._instances[name] = llm

    def assign_role(self, role: str, name: str) -> None:
        self._require(name)
        self._roles[role] = name

    def set_default(self, name: str) -> None:
        self._require(name)
        self._default = name

    # --- lookup ----------------------------------------------------------------------------
    def _require(self, name: str) -> ModelEntry:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self._entries) or "none"
            raise UnknownModelError(f"No model named '{name}' is configured.",
                                    hint=f"Known models: {known}. Run `desktop-app models`.") from None

    def entry(self, name: str) -> ModelEntry:
        return self._require(name)

    def get(self, name: str) -> LLM:
        """The model called ``name``, built on first use."""
        entry = self._require(name)
        if name not in self._instances:
            self._instances[name] = entry.factory()
        return self._instances[name]

    def get_by_role(self, role: str) -> LLM:
        return self.get(self.name_for_role(role))

    def name_for_role(self, role: str) -> str:
        try:
            return self._roles[role]
        except KeyError:
            roles = ", ".join(sorted(self._roles)) or "none"
            raise UnknownModelError(f"No model has the role '{role}'.",
                                    hint=f"Roles in use: {roles}. Assign one in Settings.") from None

    def get_default(self) -> LLM:
        return self.get(self.default_name)

    @property
    def default_name(self) -> str:
        if self._default is None:
            raise ConfigError("No model is configured.",
                              hint="Enable the bundled model or add one in Settings.")
        return self._default

    def resolve(self, name_or_role: str | None) -> str:
        """A model name for a name, a role, or None (the default)."""
        if not name_or_role:
            return self.default_name
        if name_or_role in self._entries:
            return name_or_role
        if name_or_role in self._roles:
            return self._roles[name_or_role]
        self._require(name_or_role)  # raises with the list of known names
        raise AssertionError("unreachable")

    def names(self) -> list[str]:
        return list(self._entries)

    def entries(self) -> list[ModelEntry]:
        return list(self._entries.values())

    def roles(self) -> dict[str, str]:
        return dict(self._roles)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def loaded(self) -> list[str]:
        """Names of the models holding their weights in memory now."""
        return [name for name, llm in self._instances.items() if getattr(llm, "loaded", False)]

    async def unload(self, name: str) -> None:
        """Free ``name``'s model; the next ``get`` builds it again."""
        llm = self._instances.pop(name, None)
        if llm is not None:
            await llm.aclose()

    async def adopt_from(self, old: ModelRegistry) -> None:
        """Keep ``old``'s loaded models that this registry configures the same way (same
        name and ``config_key``) and close the rest: saving the settings (the theme, say)
        must not unload the model the chat is using and load it again."""
        for name, llm in list(old._instances.items()):
            mine = self._entries.get(name)
            theirs = old._entries.get(name)
            if (mine is not None and theirs is not None and mine.config_key
                    and mine.config_key == theirs.config_key and name not in self._instances):
                self._instances[name] = llm
            else:
                await llm.aclose()
        old._instances.clear()

    async def aclose(self) -> None:
        for llm in self._instances.values():
            await llm.aclose()
        self._instances.clear()
