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
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.config.settings import BundledModelConfig, LocalModelConfig, McpServerConfig


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


class LocalModelsEditor(QWidget):
    """The built-in model's options and a list of user-added GGUF files."""

    def __init__(self, bundled: BundledModelConfig, models: list[LocalModelConfig],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bundled = bundled.model_copy(deep=True)
        self.models = [m.model_copy(deep=True) for m in models]
        self._row = -1
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
        row = QHBoxLayout(files)
        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._select)
        self.add_button = QPushButton("Add file…")
        self.add_button.clicked.connect(self._browse)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_model)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        left.addWidget(self.list, 1)
        left.addLayout(buttons)
        row.addLayout(left, 1)
        self.form_widget = QWidget()
        f = QFormLayout(self.form_widget)
        self.name = QLineEdit()
        self.path = QLineEdit()
        self.context = _context_box(4096)
        self.threads = _threads_box(None)
        self.constrained = QCheckBox("constrained JSON")
        f.addRow("Name", self.name)
        f.addRow("File", self.path)
        f.addRow("Context size", self.context)
        f.addRow("Threads", self.threads)
        f.addRow(self.constrained)
        row.addWidget(self.form_widget, 2)
        layout.addWidget(files, 1)
        for model in self.models:
            self.list.addItem(model.name)
        self.form_widget.setEnabled(False)
        if self.models:
            self.list.setCurrentRow(0)

    def bundled_config(self) -> BundledModelConfig:
        return self._bundled.model_copy(update=dict(
            enabled=self.bundled_enabled.isChecked(), context_size=self.bundled_context.value(),
            n_threads=self.bundled_threads.value() or None,
            constrained_json=self.bundled_json.isChecked()))

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Add a GGUF model", str(Path.home()),
                                              "GGUF models (*.gguf);;All files (*)")
        if path:
            self.add_model(Path(path))

    def add_model(self, path: Path) -> None:
        """Add ``path`` as a local model named after the file."""
        self.commit()
        names = {m.name for m in self.models}
        name = path.stem
        suffix = 2
        while name in names:
            name, suffix = f"{path.stem}-{suffix}", suffix + 1
        self.models.append(LocalModelConfig(name=name, path=str(path)))
        self.list.addItem(name)
        self.list.setCurrentRow(len(self.models) - 1)

    def remove_model(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self._row = -1
            del self.models[row]
            self.list.takeItem(row)

    def _select(self, row: int) -> None:
        self.commit()
        self._row = row
        self.form_widget.setEnabled(row >= 0)
        if row < 0:
            return
        m = self.models[row]
        self.name.setText(m.name)
        self.path.setText(m.path)
        self.context.setValue(m.context_size)
        self.threads.setValue(m.n_threads or 0)
        self.constrained.setChecked(m.constrained_json)

    def commit(self) -> None:
        row = self._row
        if not 0 <= row < len(self.models):
            return
        self.models[row] = self.models[row].model_copy(update=dict(
            name=self.name.text().strip(), path=self.path.text().strip(),
            context_size=self.context.value(), n_threads=self.threads.value() or None,
            constrained_json=self.constrained.isChecked()))
        self.list.item(row).setText(self.models[row].name or "(unnamed)")


class McpEditor(QWidget):
    """MCP tool servers: a command to start (stdio) or a URL (http)."""

    def __init__(self, servers: list[McpServerConfig], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.servers = [s.model_copy(deep=True) for s in servers]
        self._row = -1
        layout = QHBoxLayout(self)
        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._select)
        add = QPushButton("Add")
        add.clicked.connect(self.add_server)
        remove = QPushButton("Remove")
        remove.clicked.connect(self.remove_server)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        left.addWidget(self.list, 1)
        left.addLayout(buttons)
        layout.addLayout(left, 1)
        self.form_widget = QWidget()
        f = QFormLayout(self.form_widget)
        self.name = QLineEdit()
        self.transport = QComboBox()
        self.transport.addItems(["stdio", "http"])
        self.command = QLineEdit()
        self.command.setPlaceholderText("e.g. python -m my_mcp_server --root ~/notes")
        self.url = QLineEdit()
        self.url.setPlaceholderText("http://localhost:9000/mcp")
        self.enabled = QCheckBox("enabled")
        f.addRow("Name", self.name)
        f.addRow("Transport", self.transport)
        f.addRow("Command", self.command)
        f.addRow("URL", self.url)
        f.addRow(self.enabled)
        layout.addWidget(self.form_widget, 2)
        for server in self.servers:
            self.list.addItem(server.name)
        self.form_widget.setEnabled(False)
        if self.servers:
            self.list.setCurrentRow(0)

    def add_server(self) -> None:
        self.commit()
        names = {s.name for s in self.servers}
        name = next(f"mcp-{i}" for i in range(1, 1000) if f"mcp-{i}" not in names)
        self.servers.append(McpServerConfig(name=name))
        self.list.addItem(name)
        self.list.setCurrentRow(len(self.servers) - 1)

    def remove_server(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self._row = -1
            del self.servers[row]
            self.list.takeItem(row)

    def _select(self, row: int) -> None:
        self.commit()
        self._row = row
        self.form_widget.setEnabled(row >= 0)
        if row < 0:
            return
        s = self.servers[row]
        self.name.setText(s.name)
        self.transport.setCurrentText(s.transport)
        self.command.setText(shlex.join(s.command))
        self.url.setText(s.url or "")
        self.enabled.setChecked(s.enabled)

    def commit(self) -> None:
        row = self._row
        if not 0 <= row < len(self.servers):
            return
        try:
            command = shlex.split(self.command.text())
        except ValueError:
            command = self.command.text().split()
        self.servers[row] = self.servers[row].model_copy(update=dict(
            name=self.name.text().strip(), transport=self.transport.currentText(),
            command=command, url=self.url.text().strip() or None,
            enabled=self.enabled.isChecked()))
        self.list.item(row).setText(self.servers[row].name or "(unnamed)")
