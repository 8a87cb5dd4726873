"""The per-conversation model picker and the ReAct / DAG mode switch.

Models come from the ModelRegistry without loading any of them; each shows where it runs
(local / hosted) and its abilities, so people comparing models see what each can do.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QWidget

from desktop_app.core.llm.registry import ModelEntry, ModelRegistry

#: Abilities worth naming only when a model has them.
_EXTRA_ABILITIES = (("streaming", "streaming"), ("vision", "images"), ("thinking", "thinking"))
_KIND_LABELS = {"bundled": "built-in, offline", "local": "local GGUF", "endpoint": "hosted API",
                "custom": "custom"}


def abilities_text(entry: ModelEntry) -> str:
    """How the agent works with this model, short enough for the strip beside the picker:
    ``native tool calls · streaming`` or ``tools via JSON replies · streaming``.

    A row of ✓/✗ marks said "tools ✗ · JSON ✗" for a model the agent drives through JSON
    replies, and was cut off; what is missing is not listed.
    """
    tools = ("native tool calls" if entry.abilities.get("tool_call")
             else "tools via JSON replies")
    if not entry.abilities.get("tool_call") and entry.abilities.get("json_mode"):
        tools += " (strict JSON)"
    extras = [label for key, label in _EXTRA_ABILITIES if entry.abilities.get(key)]
    return " · ".join([tools, *extras])


def describe(entry: ModelEntry, speed: str | None = None) -> str:
    """A tooltip: what the model is, where it runs, its context window and abilities, and
    its speed on this machine when it was measured."""
    lines = [f"{entry.name} — {_KIND_LABELS.get(entry.kind, entry.kind)}"]
    if entry.description:
        lines.append(entry.description)
    lines.append(f"context window: {entry.context_size:,} tokens")
    if entry.roles:
        lines.append(f"roles: {', '.join(entry.roles)}")
    lines.append(abilities_text(entry))
    if not entry.abilities.get("tool_call"):
        lines.append("No native tool calls: the agent uses JSON mode with this model.")
    if speed:
        lines.append(speed)
    return "\n".join(lines)


class ElidedLabel(QLabel):
    """A one-line label that ends in "…" instead of being cut off when space runs out."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setMinimumWidth(40)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def set_full_text(self, text: str) -> None:
        self._full = text
        self._elide()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight,
                                                   max(0, self.width())))


class ModelPicker(QWidget):
    """A model combo box, the chosen model's abilities, and the mode switch."""

    model_changed = Signal(str)
    mode_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.combo = QComboBox(self)
        # Room for ~10 characters at least; longer names elide instead of widening the window (with
        # the artifact pane open, the header decided the window's minimum width).
        self.combo.setMinimumContentsLength(10)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.combo.currentIndexChanged.connect(self._on_model)
        self.abilities = ElidedLabel(self)
        self.abilities.setObjectName("Muted")
        self.mode = QComboBox(self)
        self.mode.addItem("ReAct", "react")
        self.mode.addItem("DAG plan", "dag")
        self.mode.setToolTip("ReAct: one agent uses tools step by step.\n"
                             "DAG plan: a plan of steps runs in parallel where possible, each "
                             "step on the model its hint picks.")
        self.mode.currentIndexChanged.connect(self._on_mode)
        # No "Model" caption: model names say what they are, and the header's width
        # decides whether the artifact pane fits beside the sidebar.
        self.combo.setToolTip("The model that answers in this chat")
        layout.addWidget(self.combo)
        layout.addWidget(self.abilities, 1)
        # No "Mode" caption: "ReAct" / "DAG plan" and the tooltip say it, and the header's
        # width decides whether the artifact pane fits beside the sidebar.
        layout.addWidget(self.mode)
        #: Shown while DAG mode is chosen for a model that measured better in ReAct.
        self.advice = QLabel("ReAct suggested", self)
        self.advice.setObjectName("Warning")
        self.advice.hide()
        layout.addWidget(self.advice)
        self._advice_text: str | None = None
        self._entries: list[ModelEntry] = []
        self._default: str | None = None
        self._speeds: dict[str, str] = {}

    def set_registry(self, registry: ModelRegistry, current: str | None = None) -> None:
        """List the registry's models and select ``current`` (or the default)."""
        self.combo.blockSignals(True)
        self.combo.clear()
        self._entries = registry.entries()
        for entry in self._entries:
            kind = _KIND_LABELS.get(entry.kind, entry.kind)
            self.combo.addItem(f"{entry.name}  ({kind})", entry.name)
            self.combo.setItemData(self.combo.count() - 1,
                                   describe(entry, self._speeds.get(entry.name)), 3)  # tooltip
        self.combo.blockSignals(False)
        self._default = registry.default_name if len(registry) else None
        self.select(current if current in registry else self._default)

    @property
    def speeds(self) -> dict[str, str]:
        return dict(self._speeds)

    def set_speeds(self, speeds: dict[str, str]) -> None:
        """Measured speeds by model name, shown in each model's tooltip."""
        self._speeds = dict(speeds)
        for index, entry in enumerate(self._entries):
            self.combo.setItemData(index, describe(entry, self._speeds.get(entry.name)), 3)

    def select(self, name: str | None) -> None:
        """Show ``name`` as chosen without emitting ``model_changed``."""
        index = self.combo.findData(name) if name else -1
        if index < 0 and self._default is not None:  # a model since removed in Settings
            index = self.combo.findData(self._default)
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(max(index, 0) if self.combo.count() else -1)
        self.combo.blockSignals(False)
        self._show_abilities()

    def _on_mode(self, _index: int) -> None:
        self.advice.setVisible(bool(self._advice_text) and self.current_mode() == "dag")
        self.mode_changed.emit(self.mode.currentData())

    def set_mode(self, mode: str) -> None:
        self.mode.blockSignals(True)
        self.mode.setCurrentIndex(max(self.mode.findData(mode), 0))
        self.mode.blockSignals(False)
        self.advice.setVisible(bool(self._advice_text) and self.current_mode() == "dag")

    def set_mode_advice(self, text: str | None) -> None:
        """Advice for the current model (``dag_advice``); visible only in DAG mode."""
        self._advice_text = text
        self.advice.setToolTip(text or "")
        self.advice.setVisible(bool(text) and self.current_mode() == "dag")

    def current_model(self) -> str | None:
        return self.combo.currentData()

    def current_mode(self) -> str:
        return str(self.mode.currentData())

    def current_entry(self) -> ModelEntry | None:
        index = self.combo.currentIndex()
        return self._entries[index] if 0 <= index < len(self._entries) else None

    def _show_abilities(self) -> None:
        entry = self.current_entry()
        self.abilities.set_full_text(abilities_text(entry) if entry else "no model configured")
        self.abilities.setToolTip(describe(entry) if entry else "Add a model in Settings.")
        self.combo.setToolTip(describe(entry) if entry else "")

    def _on_model(self, _index: int) -> None:
        self._show_abilities()
        name = self.current_model()
        if name:
            self.model_changed.emit(name)
