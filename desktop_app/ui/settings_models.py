"""Settings: the built-in model, local GGUF files, and MCP servers (list + form editors)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.config.settings import BundledModelConfig, LocalModelConfig, McpServerConfig
from desktop_app.ui.settings_list import ListEditor


def _threads_box(value: int | None) -> QSpinBox:
    box = QSpinBox()
    box.setRange(0, max(64, os.cpu_count() or 1))
    box.setSpecialValueText("automatic")
    box.setValue(value or 0)
    return box


def _context_box(value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(512, 1_048_576)
    box.setSingleStep(1024)
    box.setValue(value)
    return box


class LocalModelsEditor(ListEditor[LocalModelConfig]):
    """The built-in model's options and a list of user-added GGUF files."""

    add_label = "Add file…"

    def __init__(self, bundled: BundledModelConfig, models: list[LocalModelConfig],
                 parent: QWidget | None = None) -> None:
        super().__init__(models, parent)
        self._bundled = bundled.model_copy(deep=True)
        layout = QVBoxLayout(self)
        group = QGroupBox("Built-in model (Qwen2.5-Coder 0.5B, offline)")
        form = QFormLayout(group)
        self.bundled_enabled = QCheckBox("enabled")
        self.bundled_enabled.setChecked(bundled.enabled)
        self.bundled_context = _context_box(bundled.context_size)
        self.bundled_threads = _threads_box(bundled.n_threads)
        self.bundled_json = QCheckBox("constrained JSON (grammar; tool calls always parse)")
        self.bundled_json.setChecked(bundled.constrained_json)
        form.addRow(self.bundled_enabled)
        form.addRow("Context size", self.bundled_context)
        form.addRow("Threads", self.bundled_threads)
        form.addRow(self.bundled_json)
        layout.addWidget(group)
        files = QGroupBox("Your GGUF models")
        files.setLayout(self.body)
        self.name = QLineEdit()
        self.path = QLineEdit()
        self.context = _context_box(4096)
        self.threads = _threads_box(None)
        self.constrained = QCheckBox("constrained JSON")
        self.form.addRow("Name", self.name)
        self.form.addRow("File", self.path)
        self.form.addRow("Context size", self.context)
        self.form.addRow("Threads", self.threads)
        self.form.addRow(self.constrained)
        layout.addWidget(files, 1)
        self.populate()

    @property
    def models(self) -> list[LocalModelConfig]:
        return self.items

    def bundled_config(self) -> BundledModelConfig:
        return self._bundled.model_copy(update={
            "enabled": self.bundled_enabled.isChecked(),
            "context_size": self.bundled_context.value(),
            "n_threads": self.bundled_threads.value() or None,
            "constrained_json": self.bundled_json.isChecked()})

    def new_item(self) -> LocalModelConfig | None:
        path, _ = QFileDialog.getOpenFileName(self, "Add a GGUF model", str(Path.home()),
                                              "GGUF models (*.gguf);;All files (*)")
        if path:
            self.add_model(Path(path))
        return None

    def add_model(self, path: Path) -> None:
        """Add ``path`` as a local model named after the file."""
        names = {m.name for m in self.items}
        name = path.stem
        suffix = 2
        while name in names:
            name, suffix = f"{path.stem}-{suffix}", suffix + 1
        self.add_item(LocalModelConfig(name=name, path=str(path)))

    def remove_model(self) -> None:
        self.remove_current()

    def show_item(self, m: LocalModelConfig) -> None:
        self.name.setText(m.name)
        self.path.setText(m.path)
        self.context.setValue(m.context_size)
        self.threads.setValue(m.n_threads or 0)
        self.constrained.setChecked(m.constrained_json)

    def read_form(self, m: LocalModelConfig) -> LocalModelConfig:
        return m.model_copy(update={
            "name": self.name.text().strip(), "path": self.path.text().strip(),
            "context_size": self.context.value(), "n_threads": self.threads.value() or None,
            "constrained_json": self.constrained.isChecked()})


class McpEditor(ListEditor[McpServerConfig]):
    """MCP tool servers: a command to start (stdio) or a URL (http)."""

    def __init__(self, servers: list[McpServerConfig], parent: QWidget | None = None) -> None:
        super().__init__(servers, parent)
        layout = QHBoxLayout(self)
        layout.addLayout(self.body)
        self.name = QLineEdit()
        self.transport = QComboBox()
        self.transport.addItems(["stdio", "http"])
        self.command = QLineEdit()
        self.command.setPlaceholderText("e.g. python -m my_mcp_server --root ~/notes")
        self.url = QLineEdit()
        self.url.setPlaceholderText("http://localhost:9000/mcp")
        self.enabled = QCheckBox("enabled")
        self.form.addRow("Name", self.name)
        self.form.addRow("Transport", self.transport)
        self.form.addRow("Command", self.command)
        self.form.addRow("URL", self.url)
        self.form.addRow(self.enabled)
        self.populate()

    @property
    def servers(self) -> list[McpServerConfig]:
        return self.items

    def add_server(self) -> None:
        self.add_new()

    def remove_server(self) -> None:
        self.remove_current()

    def new_item(self) -> McpServerConfig:
        return McpServerConfig(name=self.unique_name("mcp"))

    def show_item(self, s: McpServerConfig) -> None:
        self.name.setText(s.name)
        self.transport.setCurrentText(s.transport)
        self.command.setText(shlex.join(s.command))
        self.url.setText(s.url or "")
        self.enabled.setChecked(s.enabled)

    def read_form(self, s: McpServerConfig) -> McpServerConfig:
        try:
            command = shlex.split(self.command.text())
        except ValueError:
            command = self.command.text().split()
        return s.model_copy(update={
            "name": self.name.text().strip(), "transport": self.transport.currentText(),
            "command": command, "url": self.url.text().strip() or None,
            "enabled": self.enabled.isChecked()})
