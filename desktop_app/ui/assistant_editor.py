"""Manage assistants: the built-in ones (read-only; duplicate one to change it) and the
user's own, each a system prompt, a model, tools, a temperature and a context size."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.assistants import all_assistants
from desktop_app.core.config.settings import AssistantConfig, Settings


class AssistantEditor(QDialog):
    """Edits ``settings.assistants``; ``saved`` carries the new settings (the window saves
    and applies them)."""

    saved = Signal(object)

    def __init__(self, settings: Settings, registry: Any, tool_names: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Assistants")
        self.resize(860, 560)
        self.settings = settings.model_copy(deep=True)
        self.assistants = [a.model_copy() for a in all_assistants(self.settings)]
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._show)
        self.name = QLineEdit()
        self.description = QLineEdit()
        self.prompt = QPlainTextEdit()
        self.prompt.setPlaceholderText("Empty: the app's default system prompt")
        self.model = QComboBox()
        self.model.addItem("The chat's model", None)
        for name in registry.names() if hasattr(registry, "names") else []:
            self.model.addItem(name, name)
        self.all_tools = QCheckBox("Every enabled tool")
        self.tools = QListWidget()
        for name in sorted(tool_names):
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.tools.addItem(item)
        self.all_tools.toggled.connect(lambda on: self.tools.setEnabled(not on))
        self.own_temperature = QCheckBox("Set")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.own_context = QCheckBox("Limit")
        self.context = QSpinBox()
        self.context.setRange(512, 1_048_576)
        self.context.setSingleStep(512)
        self.own_temperature.toggled.connect(self.temperature.setEnabled)
        self.own_context.toggled.connect(self.context.setEnabled)
        self.note = QLabel()
        self.note.setObjectName("Muted")
        self.note.setWordWrap(True)
        self.new_button = QPushButton("New")
        self.new_button.clicked.connect(self.add_new)
        self.duplicate_button = QPushButton("Duplicate")
        self.duplicate_button.clicked.connect(self.duplicate)
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self.delete)
        self.error = QLabel()
        self.error.setObjectName("Warning")
        self.error.hide()  # an empty warning still draws its tinted bar
        temperature_row = QHBoxLayout()
        temperature_row.addWidget(self.own_temperature)
        temperature_row.addWidget(self.temperature, 1)
        context_row = QHBoxLayout()
        context_row.addWidget(self.own_context)
        context_row.addWidget(self.context, 1)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Description", self.description)
        form.addRow("System prompt", self.prompt)
        form.addRow("Model", self.model)
        form.addRow("Tools", self.all_tools)
        form.addRow("", self.tools)
        form.addRow("Temperature", temperature_row)
        form.addRow("Context (tokens)", context_row)
        self.form_box = QWidget()
        self.form_box.setLayout(form)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        buttons_row = QHBoxLayout()
        for button in (self.new_button, self.duplicate_button, self.delete_button):
            buttons_row.addWidget(button)
        left.addLayout(buttons_row)
        right = QVBoxLayout()
        right.addWidget(self.note)
        right.addWidget(self.form_box, 1)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addLayout(right, 2)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self._index = -1
        self._fill_list(0)

    def _fill_list(self, select: int) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for assistant in self.assistants:
            self.list.addItem(assistant.name + ("  (built in)" if assistant.builtin else ""))
        self.list.blockSignals(False)
        self._index = -1
        self.list.setCurrentRow(min(select, len(self.assistants) - 1))

    def _show(self, row: int) -> None:
        self._keep()
        self._index = row
        if row < 0:
            return
        a = self.assistants[row]
        self.name.setText(a.name)
        self.description.setText(a.description)
        self.prompt.setPlainText(a.system_prompt)
        self.model.setCurrentIndex(max(self.model.findData(a.model), 0))
        self.all_tools.setChecked(a.tools is None)
        for i in range(self.tools.count()):
            item = self.tools.item(i)
            on = a.tools is not None and item.text() in a.tools
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self.tools.setEnabled(a.tools is not None)
        self.own_temperature.setChecked(a.temperature is not None)
        self.temperature.setValue(a.temperature if a.temperature is not None else 0.2)
        self.temperature.setEnabled(a.temperature is not None)
        self.own_context.setChecked(a.context_size is not None)
        self.context.setValue(a.context_size or 8192)
        self.context.setEnabled(a.context_size is not None)
        self.form_box.setEnabled(not a.builtin)
        self.delete_button.setEnabled(not a.builtin)
        self.note.setText("Built in: duplicate it to make your own version." if a.builtin
                          else "Your assistant.")

    def _keep(self) -> None:
        """Write the form back into the assistant being shown (user ones only)."""
        if self._index < 0 or self._index >= len(self.assistants):
            return
        a = self.assistants[self._index]
        if a.builtin:
            return
        checked = [self.tools.item(i).text() for i in range(self.tools.count())
                   if self.tools.item(i).checkState() == Qt.CheckState.Checked]
        self.assistants[self._index] = a.model_copy(update={
            "name": self.name.text().strip(), "description": self.description.text().strip(),
            "system_prompt": self.prompt.toPlainText().strip(),
            "model": self.model.currentData(),
            "tools": None if self.all_tools.isChecked() else checked,
            "temperature": round(self.temperature.value(), 2)
            if self.own_temperature.isChecked() else None,
            "context_size": self.context.value() if self.own_context.isChecked() else None})

    def _unique(self, wanted: str) -> str:
        names = {a.name for a in self.assistants}
        name, n = wanted, 2
        while name in names:
            name, n = f"{wanted} {n}", n + 1
        return name

    def add_new(self) -> None:
        self._keep()
        self.assistants.append(AssistantConfig(name=self._unique("My assistant")))
        self._fill_list(len(self.assistants) - 1)

    def duplicate(self) -> None:
        self._keep()
        if self._index < 0:
            return
        source = self.assistants[self._index]
        name = source.name if source.builtin and not any(
            a.name == source.name and not a.builtin for a in self.assistants) else None
        copy = source.model_copy(update={"builtin": False,
                                         "name": name or self._unique(source.name)})
        if source.builtin and name:
            # Same name: the user's version replaces the built-in one.
            self.assistants[self._index] = copy
            self._fill_list(self._index)
        else:
            self.assistants.append(copy)
            self._fill_list(len(self.assistants) - 1)

    def delete(self) -> None:
        if self._index < 0 or self.assistants[self._index].builtin:
            return
        del self.assistants[self._index]
        self._index = -1
        self._fill_list(0)

    def save(self) -> None:
        self._keep()
        own = [a for a in self.assistants if not a.builtin]
        names = [a.name for a in own]
        if any(not n for n in names) or len(set(names)) != len(names):
            self.error.setText("Every assistant needs its own, non-empty name.")
            self.error.show()
            return
        self.settings.assistants = own
        self.saved.emit(self.settings)  # the window saves them, off the Qt thread
        self.accept()
