"""The settings dialog: models, defaults and roles, tools, MCP servers, appearance.

Edits a copy of the settings; Save validates everything first (unique names, required
fields, files that exist), stores typed API keys in the OS keyring — never in the settings
file — and only then emits ``saved``. When no keyring exists it says so and what to do
instead (an environment variable), and nothing is saved.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.config import secrets
from desktop_app.core.config.settings import Settings
from desktop_app.core.errors import ConfigError, SecretsError
from desktop_app.core.tools.builtin import default_tools
from desktop_app.ui.settings_endpoints import EndpointsEditor, key_ref
from desktop_app.ui.settings_models import LocalModelsEditor, McpEditor

ROLES = ("general", "fast", "reasoning")


class SettingsDialog(QDialog):
    """Edit settings; ``saved(Settings)`` after a successful save."""

    saved = Signal(object)

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.resize(820, 560)
        self.original = settings
        self.settings = settings.model_copy(deep=True)
        layout = QVBoxLayout(self)
        self.removed_keys: list[str] = []
        self.saving: asyncio.Future[None] | None = None
        self.error = QLabel("")
        self.error.setObjectName("ErrorCard")
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(self.error)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs, 1)

        self.endpoints = EndpointsEditor(self.settings.endpoints)
        self.tabs.addTab(self.endpoints, "Hosted && server models")
        self.local = LocalModelsEditor(self.settings.bundled, self.settings.local_models)
        self.tabs.addTab(self.local, "Local models")
        self.tabs.addTab(self._defaults_tab(), "Defaults && roles")
        self.tabs.addTab(self._tools_tab(), "Tools")
        self.mcp = McpEditor(self.settings.mcp_servers)
        self.tabs.addTab(self.mcp, "MCP servers")
        self.tabs.addTab(self._appearance_tab(), "Appearance")

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        self.about_button = buttons.addButton("About", QDialogButtonBox.ButtonRole.HelpRole)
        self.about_button.clicked.connect(self.show_about)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        layout.addWidget(buttons)

    # --- tabs -----------------------------------------------------------------------------------
    def _model_names(self) -> list[str]:
        names = [self.settings.bundled.name] if self.settings.bundled.enabled else []
        names += [m.name for m in self.settings.local_models]
        names += [e.name for e in self.settings.endpoints]
        return names

    def _defaults_tab(self) -> QWidget:
        tab = QWidget()
        form = QFormLayout(tab)
        self.default_model = QComboBox()
        self.default_model.setEditable(True)
        self.default_model.addItem("")
        self.default_model.addItems(self._model_names())
        self.default_model.setEditText(self.settings.default_model or "")
        form.addRow("Default model", self.default_model)
        form.addRow(QLabel("Empty means the built-in model. Roles pick models for DAG "
                           "steps and helper calls; empty means automatic."))
        self.role_boxes: dict[str, QComboBox] = {}
        for role in ROLES:
            box = QComboBox()
            box.setEditable(True)
            box.addItem("")
            box.addItems(self._model_names())
            box.setEditText(self.settings.roles.get(role, ""))
            self.role_boxes[role] = box
            form.addRow(f"Role “{role}”", box)
        return tab

    def _tools_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(QLabel("Tools the assistant may use:"))
        self.tool_list = QListWidget()
        for tool in default_tools(None):
            item = QListWidgetItem(f"{tool.name} — {tool.description}"
                                   + ("" if tool.read_only else "  (asks before changing things)"))
            item.setData(Qt.ItemDataRole.UserRole, tool.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            disabled = tool.name in self.settings.tools.disabled
            item.setCheckState(Qt.CheckState.Unchecked if disabled else Qt.CheckState.Checked)
            self.tool_list.addItem(item)
        layout.addWidget(self.tool_list, 1)
        row = QHBoxLayout()
        self.workspace = QLineEdit(self.settings.tools.workspace or "")
        self.workspace.setPlaceholderText("folder the file tools may read and write")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_workspace)
        row.addWidget(QLabel("Workspace folder"))
        row.addWidget(self.workspace, 1)
        row.addWidget(browse)
        layout.addLayout(row)
        from desktop_app.core.sandbox import sandbox_status

        sandbox = sandbox_status()
        self.code_tool = QCheckBox("Let the assistant run Python code it writes, inside an OS "
                                   "sandbox (workspace folder only, no network)")
        self.code_tool.setChecked(sandbox.available and self.settings.tools.code_tool_enabled)
        self.code_tool.setEnabled(sandbox.available)
        layout.addWidget(self.code_tool)
        if not sandbox.available:
            why = QLabel(f"Unavailable: {sandbox.reason}")
            why.setObjectName("Muted")
            why.setWordWrap(True)
            layout.addWidget(why)
        timeout_row = QHBoxLayout()
        self.tool_timeout = QDoubleSpinBox()
        self.tool_timeout.setRange(1, 3600)
        self.tool_timeout.setDecimals(0)
        self.tool_timeout.setSuffix(" s")
        self.tool_timeout.setValue(self.settings.tools.timeout_seconds)
        timeout_row.addWidget(QLabel("Stop any tool call after"))
        timeout_row.addWidget(self.tool_timeout)
        timeout_row.addStretch(1)
        layout.addLayout(timeout_row)
        self.always_allow = QLabel("Always allowed without asking: "
                                   + (", ".join(self.settings.tools.always_allow) or "none"))
        self.always_allow.setWordWrap(True)
        self.reset_always = QPushButton("Ask again for all tools")
        self.reset_always.clicked.connect(self._reset_always)
        layout.addWidget(self.always_allow)
        layout.addWidget(self.reset_always)
        return tab

    def _appearance_tab(self) -> QWidget:
        tab = QWidget()
        form = QFormLayout(tab)
        self.theme = QComboBox()
        for label, value in (("System", "system"), ("Light", "light"), ("Dark", "dark")):
            self.theme.addItem(label, value)
        self.theme.setCurrentIndex(max(0, self.theme.findData(self.settings.ui.theme)))
        form.addRow("Theme", self.theme)
        return tab

    def _browse_workspace(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Workspace folder", self.workspace.text())
        if folder:
            self.workspace.setText(folder)

    def _reset_always(self) -> None:
        self.settings.tools.always_allow = []
        self.always_allow.setText("Always allowed without asking: none")

    # --- saving ---------------------------------------------------------------------------------
    def collect(self) -> Settings:
        """The settings as edited (not validated)."""
        self.endpoints.commit()
        self.local.commit()
        self.mcp.commit()
        s = self.settings.model_copy(deep=True)
        s.endpoints = [e.model_copy() for e in self.endpoints.endpoints]
        s.bundled = self.local.bundled_config()
        s.local_models = [m.model_copy() for m in self.local.models]
        s.mcp_servers = [m.model_copy() for m in self.mcp.servers]
        s.default_model = self.default_model.currentText().strip() or None
        s.roles = {role: box.currentText().strip() for role, box in self.role_boxes.items()
                   if box.currentText().strip()}
        s.tools.disabled = [self.tool_list.item(i).data(Qt.ItemDataRole.UserRole)
                            for i in range(self.tool_list.count())
                            if self.tool_list.item(i).checkState() != Qt.CheckState.Checked]
        s.tools.workspace = self.workspace.text().strip() or None
        s.tools.code_tool_enabled = self.code_tool.isChecked()
        s.tools.timeout_seconds = self.tool_timeout.value()
        s.ui.theme = self.theme.currentData()
        return s

    def validate(self, s: Settings) -> list[str]:
        """Problems that would stop the app from using these settings, in plain words."""
        problems: list[str] = []
        names = [n for n in ([s.bundled.name] if s.bundled.enabled else [])]
        names += [m.name for m in s.local_models] + [e.name for e in s.endpoints]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            problems.append(f"Two models share the name {', '.join(duplicates)}; rename one.")
        for e in s.endpoints:
            if not e.name:
                problems.append("An endpoint has no name.")
            if not e.base_url.startswith(("http://", "https://")):
                problems.append(f"Endpoint “{e.name}”: the base URL must start with http:// or https://.")
            if not e.model:
                problems.append(f"Endpoint “{e.name}”: choose a model (Fetch models lists them).")
        for m in s.local_models:
            if not Path(m.path).expanduser().is_file():
                problems.append(f"Local model “{m.name}”: the file {m.path} does not exist.")
        for server in s.mcp_servers:
            if server.transport == "stdio" and not server.command:
                problems.append(f"MCP server “{server.name}”: give the command that starts it.")
            if server.transport == "http" and not (server.url or "").startswith(("http://", "https://")):
                problems.append(f"MCP server “{server.name}”: give its http(s) URL.")
        for label, value in [("Default model", s.default_model), *s.roles.items()]:
            if value and value not in names:
                problems.append(f"{label}: no model is called “{value}”.")
        if s.tools.workspace and not Path(s.tools.workspace).expanduser().is_dir():
            problems.append(f"The workspace folder {s.tools.workspace} does not exist.")
        return problems

    def show_about(self) -> None:
        from desktop_app.ui.about import AboutDialog

        self.about = AboutDialog(self)
        self.about.open()

    def save(self) -> bool:
        """Validate; False (and the problems shown) if blocked. Otherwise the keyring work
        runs on a thread (a locked keyring may wait for its unlock prompt: the window stays
        responsive) and ``saved`` is emitted when it is done (``self.saving``)."""
        s = self.collect()
        problems = self.validate(s)
        if problems:
            self._show_error("\n".join(problems))
            return False
        self.error.hide()
        self.save_button.setEnabled(False)
        self.saving = asyncio.ensure_future(self._save_with_keys(s))
        return True

    async def _save_with_keys(self, s: Settings) -> None:
        typed = [(index, key_ref(s.endpoints[index].name), key)
                 for index, key in self.endpoints.new_keys.items()]
        try:
            stored, failure = await asyncio.to_thread(_store_keys, typed)
            for index, ref in stored:
                s.endpoints[index] = s.endpoints[index].model_copy(update={"api_key_ref": ref})
            if failure is not None:
                index, exc = failure
                if isinstance(exc, SecretsError):
                    # The key is dropped (never written anywhere else); Save works again.
                    self.endpoints.forget_typed_key(index)
                    self._show_error(
                        f"The API key of “{s.endpoints[index].name}” was not saved: {exc} "
                        "Put it in an environment variable and name that under “…or key "
                        "from env”. Save again to keep your other changes.")
                else:
                    self._show_error(str(exc))
                for index, _ref in stored:
                    self.endpoints.new_keys.pop(index, None)
                return
            self.endpoints.new_keys.clear()
            kept = {e.api_key_ref for e in s.endpoints if e.api_key_ref}
            removed = [(e.name, e.api_key_ref) for e in self.original.endpoints
                       if e.api_key_ref and e.api_key_ref not in kept]
            self.removed_keys = await asyncio.to_thread(_forget_keys, removed)
            self.saved_settings = s
            self.saved.emit(s)
            self.accept()
        except Exception as exc:  # noqa: BLE001 - shown in the dialog, never lost
            from desktop_app.ui.error_funnel import user_message

            self._show_error(user_message(exc))
        finally:
            self.save_button.setEnabled(True)

    def _show_error(self, text: str) -> None:
        self.error.setText(f"⚠ {text}")
        self.error.show()



def _store_keys(typed: list[tuple[int, str, str]]
                ) -> tuple[list[tuple[int, str]], tuple[int, Exception] | None]:
    """Keys into the keyring (on a worker thread): the (index, ref) stored, and the first
    failure (index, error) after which nothing more is tried."""
    stored: list[tuple[int, str]] = []
    for index, ref, key in typed:
        try:
            secrets.set_api_key(ref, key)
        except (SecretsError, ConfigError) as exc:
            return stored, (index, exc)
        stored.append((index, ref))
    return stored, None


def _forget_keys(removed: list[tuple[str, str]]) -> list[str]:
    """Delete from the keyring the keys of endpoints that were removed (on a worker
    thread): a key must not outlive the endpoint it was given for. Returns the endpoints
    whose key went."""
    gone = []
    for name, ref in removed:
        try:
            secrets.delete_api_key(ref)
        except (SecretsError, ConfigError):
            continue  # no keyring: nothing was stored there
        gone.append(name)
    return gone
