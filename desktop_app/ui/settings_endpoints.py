"""Settings: OpenAI-compatible endpoints — presets, model list from ``/v1/models``, test.

The API key field is write-only: a stored key is never read back into the dialog (it is
in the OS keyring); typing a new one replaces it when the settings are saved.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from desktop_app.core.config.settings import EndpointModelConfig
from desktop_app.core.errors import DesktopAppError
from desktop_app.ui.settings_list import ListEditor


@dataclass(frozen=True)
class Preset:
    """A known kind of OpenAI-compatible server."""

    label: str
    base_url: str
    needs_key: bool
    example_model: str


PRESETS = (
    Preset("OpenAI", "https://api.openai.com/v1", True, "gpt-4o-mini"),
    Preset("Ollama", "http://localhost:11434/v1", False, "llama3.1"),
    Preset("LM Studio", "http://localhost:1234/v1", False, "local-model"),
    Preset("llama.cpp server", "http://localhost:8080/v1", False, "default"),
    Preset("vLLM", "http://localhost:8000/v1", False, "meta-llama/Llama-3.1-8B-Instruct"),
    Preset("OpenRouter", "https://openrouter.ai/api/v1", True, "openai/gpt-4o-mini"),
)


def key_ref(name: str) -> str:
    """The keyring entry name of an endpoint's key."""
    return f"endpoint:{name}"


class EndpointsEditor(ListEditor[EndpointModelConfig]):
    """A list of endpoints and a form for the selected one."""

    def __init__(self, endpoints: list[EndpointModelConfig], parent: QWidget | None = None) -> None:
        super().__init__(endpoints, parent)
        #: Keys typed in this dialog, by endpoint index; saved to the keyring on Save.
        self.new_keys: dict[int, str] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        outer = QHBoxLayout(self)
        outer.addLayout(self.body)
        form = self.form
        self.preset = QComboBox()
        self.preset.addItem("Custom…", None)
        for preset in PRESETS:
            self.preset.addItem(preset.label, preset)
        self.preset.activated.connect(self._apply_preset)
        self.name = QLineEdit()
        self.name.textEdited.connect(self._rename_item)
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("https://host/v1")
        self.model = QComboBox()
        self.model.setEditable(True)
        self.fetch_button = QPushButton("Fetch models")
        self.fetch_button.setToolTip("Ask the server for its models (GET /v1/models)")
        self.fetch_button.clicked.connect(lambda: self._spawn(self.fetch_models()))
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.fetch_button)
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.keyring_note = QLabel("")
        self.keyring_note.setWordWrap(True)
        self.keyring_note.setObjectName("Muted")
        self.api_key_env = QLineEdit()
        self.api_key_env.setPlaceholderText("optional, e.g. OPENAI_API_KEY")
        self.context_size = QSpinBox()
        self.context_size.setRange(512, 2_000_000)
        self.context_size.setSingleStep(1024)
        self.tool_call = QCheckBox("native tool calls")
        self.json_mode = QCheckBox("JSON mode")
        self.thinking = QCheckBox("reasoning output")
        self.vision = QCheckBox("images")
        abilities = QHBoxLayout()
        for box in (self.tool_call, self.json_mode, self.thinking, self.vision):
            abilities.addWidget(box)
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(lambda: self._spawn(self.test_connection()))
        self.result = QLabel("")
        self.result.setWordWrap(True)
        form.addRow("Preset", self.preset)
        form.addRow("Name", self.name)
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", model_row)
        form.addRow("API key", self.api_key)
        form.addRow("", self.keyring_note)
        form.addRow("…or key from env", self.api_key_env)
        form.addRow("Context size", self.context_size)
        form.addRow("Abilities", abilities)
        form.addRow(self.test_button, self.result)
        from desktop_app.core.config.secrets import keyring_available

        if keyring_available():
            self.keyring_note.setText("Keys are kept in your system keyring, never in a file.")
        else:
            self.keyring_note.setText(
                "No system keyring was found, so a key cannot be saved here. Put the key in "
                "an environment variable and enter its name below instead.")
            # A field that takes a key it cannot keep only leads to a failing Save. Read
            # only, not disabled: a click on a disabled field left the focus in the Model
            # field, and the key typed next landed there ("gpt-4o-minisk-…").
            self.api_key.setReadOnly(True)
            self.api_key.setToolTip("No system keyring: name an environment variable below.")
        #: Shown instead of the form until there is an endpoint to edit.
        self.empty_hint = QLabel("No endpoint yet. Click “Add” to connect a hosted API or a "
                                 "local server (Ollama, LM Studio, llama.cpp, vLLM).")
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setObjectName("Muted")
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.body.addWidget(self.empty_hint, 2)
        self.populate()

    @property
    def endpoints(self) -> list[EndpointModelConfig]:
        return self.items

    def show_form(self, shown: bool) -> None:
        self.form_widget.setVisible(shown)
        self.empty_hint.setVisible(not shown)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- list -----------------------------------------------------------------------------------
    def add_endpoint(self) -> None:
        self.add_new()

    def remove_endpoint(self) -> None:
        self.remove_current()

    def new_item(self) -> EndpointModelConfig:
        return EndpointModelConfig(name=self.unique_name("endpoint"), base_url="", model="")

    def removed(self, row: int) -> None:
        self.new_keys = {(i if i < row else i - 1): k for i, k in self.new_keys.items() if i != row}

    def show_item(self, e: EndpointModelConfig) -> None:
        row = self._row
        self.name.setText(e.name)
        self.base_url.setText(e.base_url)
        self.model.setEditText(e.model)
        self.api_key.clear()
        self.api_key.setText(self.new_keys.get(row, ""))
        self.api_key.setPlaceholderText(
            "no system keyring: use an environment variable" if self.api_key.isReadOnly()
            else "stored in the keyring — type to replace" if e.api_key_ref
            else "not needed for local servers")
        self.api_key_env.setText(e.api_key_env or "")
        self.context_size.setValue(e.context_size)
        for box, value in ((self.tool_call, e.tool_call), (self.json_mode, e.json_mode),
                           (self.thinking, e.thinking), (self.vision, e.vision)):
            box.setChecked(value)
        self.result.clear()

    def read_form(self, e: EndpointModelConfig) -> EndpointModelConfig:
        key = self.api_key.text().strip()
        if key:
            self.new_keys[self._row] = key
        else:
            self.new_keys.pop(self._row, None)  # cleared: nothing to save any more
        return e.model_copy(update={
            "name": self.name.text().strip(), "base_url": self.base_url.text().strip(),
            "model": self.model.currentText().strip(),
            "api_key_env": self.api_key_env.text().strip() or None,
            "context_size": self.context_size.value(), "tool_call": self.tool_call.isChecked(),
            "json_mode": self.json_mode.isChecked(), "thinking": self.thinking.isChecked(),
            "vision": self.vision.isChecked()})

    def forget_typed_key(self, row: int) -> None:
        """Clear a typed key that could not be saved (the form shows the empty field)."""
        self.new_keys.pop(row, None)
        if row == self._row:
            self.api_key.clear()

    def _rename_item(self, text: str) -> None:
        if 0 <= self._row < self.list.count():
            self.list.item(self._row).setText(text.strip() or "(unnamed)")

    def _apply_preset(self, index: int) -> None:
        preset = self.preset.itemData(index)
        if not isinstance(preset, Preset):
            return
        self.base_url.setText(preset.base_url)
        if not self.model.currentText().strip():
            self.model.setEditText(preset.example_model)
        if self.name.text().startswith("endpoint-"):
            self.name.setText(preset.label.lower().replace(" ", "-").replace(".", ""))
            self._rename_item(self.name.text())
        self.api_key.setPlaceholderText("required by this service" if preset.needs_key
                                        else "not needed for local servers")

    # --- talking to the server -------------------------------------------------------------------
    async def _client(self) -> Any:
        from desktop_app.core.config.secrets import get_api_key
        from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM

        self.commit()
        e = self.endpoints[self._row]
        # The keyring may wait for an unlock prompt: not on the Qt thread.
        key = self.new_keys.get(self._row) or await asyncio.to_thread(
            get_api_key, e.api_key_ref, e.api_key_env)
        return OpenAICompatibleLLM(base_url=e.base_url, model=e.model or "-", api_key=key,
                                   name=e.name, timeout=15.0, max_retries=0)

    async def fetch_models(self) -> list[str]:
        """Fill the model box from the server's ``/models`` list."""
        if self._row < 0:
            return []
        self.result.setText("Asking the server for its models…")
        try:
            client = await self._client()
            try:
                models = await client.list_models()
            finally:
                await client.aclose()
        except DesktopAppError as exc:
            self.result.setText(f"⚠ {exc}")
            return []
        current = self.model.currentText()
        self.model.clear()
        self.model.addItems(models)
        self.model.setEditText(current if current in models or not models else models[0])
        self.result.setText(f"{len(models)} model{'s' if len(models) != 1 else ''} found.")
        return models

    async def test_connection(self) -> bool:
        if self._row < 0:
            return False
        self.result.setText("Testing…")
        try:
            client = await self._client()
            try:
                message = await client.test_connection()
            finally:
                await client.aclose()
        except DesktopAppError as exc:
            self.result.setText(f"⚠ {exc}")
            return False
        self.result.setText(f"✓ {message}")
        return True
