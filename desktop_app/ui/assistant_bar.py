"""The assistant picker in the chat header, and a chat's own settings.

A chat uses one assistant (``core/assistants``): its system prompt, tools, temperature,
context size and, if it names one, its model. The choice and the chat's own overrides are
stored with the conversation; a new chat keeps the current choice, like the model picker.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.assistants import DEFAULT_ASSISTANT, ChatOptions, all_assistants
from desktop_app.core.config.settings import AssistantConfig, Settings


class ChatOptionsDialog(QDialog):
    """Temperature and context size for this chat only (unticked: the assistant's)."""

    def __init__(self, assistant: AssistantConfig, options: ChatOptions, model_context: int,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("This chat's settings")
        self.own_temperature = QCheckBox("Own temperature")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        default_temperature = assistant.temperature
        self.temperature.setValue(options.temperature if options.temperature is not None
                                  else default_temperature or 0.2)
        self.own_temperature.setChecked(options.temperature is not None)
        self.own_context = QCheckBox("Use less context")
        self.context = QSpinBox()
        self.context.setRange(512, max(model_context, 512))
        self.context.setSingleStep(512)
        self.context.setValue(options.context_size or assistant.context_size or model_context)
        self.own_context.setChecked(options.context_size is not None)
        for box, field in ((self.own_temperature, self.temperature),
                           (self.own_context, self.context)):
            field.setEnabled(box.isChecked())
            box.toggled.connect(field.setEnabled)
        note = QLabel(
            f"Assistant '{assistant.name}': temperature "
            f"{'model default' if default_temperature is None else default_temperature}, "
            f"context {assistant.context_size or model_context:,} tokens. A smaller context "
            "is summarised sooner but answers start faster on local models.")
        note.setWordWrap(True)
        note.setObjectName("Muted")
        form = QFormLayout()
        form.addRow(self.own_temperature, self.temperature)
        form.addRow(self.own_context, self.context)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def options(self) -> ChatOptions:
        return ChatOptions(
            temperature=round(self.temperature.value(), 2) if self.own_temperature.isChecked()
            else None,
            context_size=self.context.value() if self.own_context.isChecked() else None)


class AssistantPicker(QWidget):
    """The header's assistant choice, with a menu for this chat's settings and the editor."""

    #: The user picked another assistant (its name).
    assistant_changed = Signal(str)
    options_requested = Signal()
    manage_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.setMinimumContentsLength(6)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setToolTip("The assistant: system prompt, tools, temperature and context "
                              "for this chat")
        self.combo.currentIndexChanged.connect(self._changed)
        self.more = QToolButton()
        self.more.setText("⋯")
        self.more.setAutoRaise(True)
        self.more.setToolTip("This chat's settings, or manage assistants")
        self.more.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.more)
        menu.addAction("This chat's settings…", self.options_requested.emit)
        menu.addAction("Manage assistants…", self.manage_requested.emit)
        self.more.setMenu(menu)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Assistant"))
        row.addWidget(self.combo)
        row.addWidget(self.more)
        self._assistants: list[AssistantConfig] = []

    def set_assistants(self, settings: Settings, current: str | None = None) -> None:
        current = current or self.current() or DEFAULT_ASSISTANT
        self._assistants = all_assistants(settings)
        self.combo.blockSignals(True)
        self.combo.clear()
        for assistant in self._assistants:
            self.combo.addItem(assistant.name, assistant.name)
            self.combo.setItemData(self.combo.count() - 1, assistant.description, 3)
        self.combo.blockSignals(False)
        self.select(current)

    def select(self, name: str | None) -> None:
        index = self.combo.findData(name or DEFAULT_ASSISTANT)
        if index < 0:
            index = max(self.combo.findData(DEFAULT_ASSISTANT), 0)
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(index)
        self.combo.blockSignals(False)

    def current(self) -> str | None:
        data = self.combo.currentData()
        return str(data) if data else None

    def current_assistant(self) -> AssistantConfig | None:
        name = self.current()
        return next((a for a in self._assistants if a.name == name), None)

    def _changed(self, _index: int) -> None:
        name = self.current()
        if name:
            self.assistant_changed.emit(name)


class ChatAssistant:
    """Glue between the picker, the main window and the store (kept out of MainWindow)."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.picker = AssistantPicker()
        #: Overrides chosen before the chat exists (stored when it is created).
        self.options = ChatOptions()
        self.picker.set_assistants(window.ctx.settings)
        self.picker.assistant_changed.connect(self._assistant_changed)
        self.picker.options_requested.connect(self.edit_options)
        self.picker.manage_requested.connect(self.manage)
        window.controller.share_decided.connect(self._share_decided)

    def _share_decided(self, conversation_id: str, host: str, allowed: bool) -> None:
        """The chat's answer about sending local content, so a later options save keeps it."""
        if conversation_id == self.window.conversation_id:
            self.options = self.options.with_share_decision(host, allowed)

    def show_conversation(self, conversation: Any) -> None:
        self.picker.select(conversation.assistant)
        try:
            self.options = ChatOptions.model_validate(conversation.chat_options or {})
        except ValueError:
            self.options = ChatOptions()

    def reset_options(self) -> None:
        """A new chat starts without the last chat's own options."""
        self.options = ChatOptions()

    async def attach(self, conversation_id: str) -> None:
        """A new chat was created: store the current choice with it."""
        await self.window.ctx.store.set_assistant(
            conversation_id, self.picker.current(), self.options.model_dump(exclude_defaults=True))

    def refresh(self) -> None:
        self.picker.set_assistants(self.window.ctx.settings)

    def _assistant_changed(self, name: str) -> None:
        window = self.window
        assistant = self.picker.current_assistant()
        if assistant is not None and assistant.model and assistant.model in window.ctx.registry:
            window.picker.select(assistant.model)
            window._model_changed(assistant.model)
        if window.conversation_id:
            window.spawn(window.ctx.store.set_assistant(
                window.conversation_id, name, self.options.model_dump(exclude_defaults=True)))

    def edit_options(self) -> None:
        assistant = self.picker.current_assistant()
        entry = self.window.picker.current_entry()
        if assistant is None:
            return
        dialog = ChatOptionsDialog(assistant, self.options,
                                   entry.context_size if entry else 8192, self.window)
        self.dialog = dialog
        dialog.accepted.connect(lambda: self._options_chosen(dialog.options()))
        dialog.open()  # not exec(): a nested event loop would stall the asyncio loop

    def _options_chosen(self, options: ChatOptions) -> None:
        # The dialog edits temperature and context; attached documents stay.
        self.options = options.model_copy(update={"documents": self.options.documents})
        if self.window.conversation_id:
            self.window.spawn(self.attach(self.window.conversation_id))

    def manage(self) -> None:
        from desktop_app.ui.assistant_editor import AssistantEditor

        window = self.window
        editor = AssistantEditor(window.ctx.settings, window.ctx.registry,
                                 [tool.name for tool in window.ctx.tools()], window)
        editor.saved.connect(window.settings_chosen)
        self.editor = editor
        editor.open()
