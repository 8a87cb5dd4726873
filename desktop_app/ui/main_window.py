"""The main window: sidebar, chat (header, banner, messages, composer) and artifact pane.

It wires widgets to the :class:`RunController` and the store; it renders nothing itself
(``run_render.apply_event`` does) and runs no model work (the controller awaits it).
"""

from __future__ import annotations

import asyncio
from typing import Any

import shiboken6
from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import DesktopAppError
from desktop_app.core.log_setup import configured_secrets
from desktop_app.ui import shortcuts
from desktop_app.ui.api_switch import ApiServerControl, ApiSwitch
from desktop_app.ui.app_context import AppContext
from desktop_app.ui.artifact_dock import ArtifactDock
from desktop_app.ui.artifact_pane import ArtifactPane
from desktop_app.ui.assistant_bar import ChatAssistant
from desktop_app.ui.branch_switcher import BranchSwitcher
from desktop_app.ui.chat_documents import ChatDocuments
from desktop_app.ui.chat_view import ChatView
from desktop_app.ui.composer import Composer
from desktop_app.ui.edit_session import EditSession
from desktop_app.ui.error_funnel import user_message
from desktop_app.ui.history_view import builders_for
from desktop_app.ui.message_widgets import AssistantTurn, UserMessage
from desktop_app.ui.model_drop import GgufDropFilter
from desktop_app.ui.model_picker import ModelPicker
from desktop_app.ui.privacy_ledger import LedgerButton, show_sent
from desktop_app.ui.restore_previous import offer_restore
from desktop_app.ui.run_controller import RunController
from desktop_app.ui.run_render import apply_event
from desktop_app.ui.sidebar import Sidebar
from desktop_app.ui.status_banner import StatusBanner
from desktop_app.ui.ui_state import load_state, save_state
from desktop_app.ui.voice_controls import VoiceControls
from desktop_app.ui.window_dialogs import WindowDialogs
from desktop_app.ui.window_runs import WindowRunEvents


class MainWindow(WindowRunEvents, WindowDialogs, QMainWindow):
    """The app window."""

    closed = Signal()

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle("desktop-app")
        self.resize(1180, 760)
        self.controller = RunController(ctx, self)
        self.conversation_id: str | None = None
        self.live_turn: AssistantTurn | None = None
        self._live_user: UserMessage | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        #: Set when the window was closed (maybe before anyone listened to ``closed``).
        self.is_closed = False

        self.sidebar = Sidebar(ctx.store)
        self.sidebar.setMinimumWidth(220)
        self.header = QFrame()
        self.header.setObjectName("ChatHeader")
        header = QHBoxLayout(self.header)
        header.setContentsMargins(16, 6, 16, 6)
        self.picker = ModelPicker()
        self.picker.set_registry(ctx.registry)
        self.artifacts_button = QPushButton("Artifacts")
        self.artifacts_button.setToolTip("Show the documents tools made in this conversation")
        self.artifacts_button.clicked.connect(lambda: self.artifact_dock.toggle())
        self.compare_button = QPushButton("Compare…")
        self.compare_button.setToolTip("Compare models: one prompt, several models side by side "
                                       "(Ctrl+Shift+M)")
        self.compare_button.clicked.connect(self.open_compare)
        self.assistant = ChatAssistant(self)
        self.branches = BranchSwitcher(self)
        header.addWidget(self.assistant.picker)
        header.addWidget(self.picker, 1)
        header.addWidget(self.compare_button)
        header.addWidget(self.artifacts_button)
        self.banner = StatusBanner()
        self.chat = ChatView()
        self.composer = Composer()
        self.edits = EditSession(self.composer)
        self.documents = ChatDocuments(self)
        self.composer.accessories.addWidget(self.documents.button)
        center = QWidget()
        column = QVBoxLayout(center)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        for widget in (self.header, self.banner, self.chat, self.composer):
            column.addWidget(widget, 1 if widget is self.chat else 0)
        self.artifact_pane = ArtifactPane()
        self.artifact_pane.hide()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(center)
        self.splitter.addWidget(self.artifact_pane)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([260, 900, 0])
        self.setCentralWidget(self.splitter)
        from desktop_app.ui.offline_switch import OfflineSwitch

        self.offline_switch = OfflineSwitch(ctx, self.spawn)
        self.ledger_button = LedgerButton(self.spawn, self, ctx.store)
        self.api_server = ApiServerControl(self)
        self.api_switch = ApiSwitch(self.api_server, self.spawn, self)
        self.statusBar().addPermanentWidget(self.api_switch)
        self.statusBar().addPermanentWidget(self.ledger_button)
        self.statusBar().addPermanentWidget(self.offline_switch)
        self.voice = VoiceControls(self)
        self.artifact_dock = ArtifactDock(self.splitter, self.sidebar, self.artifact_pane)

        self.sidebar.new_requested.connect(self.new_conversation)
        self.sidebar.conversation_selected.connect(lambda cid: self.spawn(self.open_conversation(cid)))
        self.sidebar.conversation_deleted.connect(self._on_deleted)
        self.sidebar.settings_requested.connect(self.open_settings)
        self.sidebar.models_requested.connect(self.open_models)
        self.chat.empty.example_chosen.connect(self.composer.set_text)
        self.composer.send_requested.connect(lambda text: self.spawn(self.send(text)))
        self.composer.interrupt_requested.connect(self.interrupt)
        self.composer.stop_requested.connect(self.controller.stop)
        self.picker.model_changed.connect(self._model_changed)
        self.picker.mode_changed.connect(self._mode_changed)
        self.controller.run_event.connect(self._on_event)
        self.controller.run_started.connect(self._on_run_started)
        self.controller.run_finished.connect(self._on_run_finished)
        self.controller.interrupt_added.connect(self._on_interrupt_added)
        self.controller.save_failed.connect(self._on_save_failed)
        self.controller.model_status.connect(self.banner.set_status)
        self.controller.model_progress.connect(self.banner.set_progress)
        self.controller.unload_when_idle(lambda: {self.picker.current_model()}, self.spawn)
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(self._system_theme_changed)
        shortcuts.install(self)  # F1 lists them
        self.artifact_pane.count_changed.connect(self._artifact_count)
        GgufDropFilter(self, self._models_dropped)
        self._show_model_in_empty_state()
        state = load_state()
        geometry = state.get("geometry")
        if isinstance(geometry, str):
            self.restoreGeometry(QByteArray.fromBase64(geometry.encode()))

    # --- plumbing -------------------------------------------------------------------------------
    def spawn(self, coro: Any) -> asyncio.Future[Any]:
        """Run ``coro`` on the loop; errors are shown in the chat, not lost."""
        task = asyncio.ensure_future(self._guard(coro))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guard(self, coro: Any) -> None:
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every error is shown (error_funnel)
            if self.is_closed:
                # A background refresh (gauge, speeds) still pending when the window closed
                # and the loop stopped: nothing is left to show it in.
                return
            self.show_error(user_message(exc))

    def show_error(self, message: str) -> None:
        turn = AssistantTurn()
        turn.add_error(message)
        self.chat.add(turn)

    async def start(self) -> None:
        """Fill the sidebar and reopen the conversation open at the last quit."""
        await self.sidebar.refresh()
        last = load_state().get("last_conversation")
        if isinstance(last, str) and last in self.sidebar.ids():
            await self.open_conversation(last)
        else:
            # After the window is up: counting loads the tool descriptions (~0.1 s).
            self.spawn(self.refresh_gauge())
        self.spawn(self.refresh_speeds())
        # The keys to scrub from error reports, read from the keyring here, off the Qt
        # thread, so that showing an error never waits for a keyring (log_setup).
        self.spawn(asyncio.to_thread(configured_secrets))
        if self.ctx.settings.api_server.enabled:  # it was on when the app was last closed
            self.spawn(self.api_server.start())
        self.documents.start_watching()  # rescan collections now, then every 30 s

    async def refresh_speeds(self) -> None:
        """Show each local model's measured speed in the picker and the Compare window."""
        from desktop_app.core.catalogue.speeds import measured_speeds

        try:
            benchmarks = await self.ctx.store.latest_benchmarks()
            speeds = await asyncio.to_thread(measured_speeds, self.ctx.settings, benchmarks)
        except (RuntimeError, DesktopAppError):
            return  # closing (the loop stops) or no store: the tooltips go without speeds
        self.picker.set_speeds(speeds)
        compare = getattr(self, "compare_window", None)
        if compare is not None and shiboken6.isValid(compare):
            compare.speeds = speeds
            compare.set_registry()

    # --- conversations --------------------------------------------------------------------------
    def new_conversation(self) -> None:
        """An empty chat; it is stored when the first message is sent."""
        self.conversation_id = None
        self.live_turn = None
        self.edits.cancel()  # the edited message belongs to the chat being left
        self.chat.clear()
        self.artifact_pane.clear()
        self.artifact_dock.close()
        self.sidebar.set_current(None)
        # This chat's own options (attached documents, its temperature) belong to the chat
        # left: an attached collection followed into every new chat and took over
        # unrelated questions.
        self.assistant.reset_options()
        self.documents.update_label()
        # The model and mode the user picked stay: a new chat is not a reset of choices.
        if self.picker.current_model() is None:
            self.picker.select(self.ctx.registry.default_name if len(self.ctx.registry)
                               else None)
        self._show_model_in_empty_state()
        self.spawn(self.refresh_gauge())
        self.composer.input.setFocus()

    async def open_conversation(self, conversation_id: str) -> None:
        detail = await self.ctx.store.load_conversation(conversation_id)
        self.edits.cancel()  # the edited message belongs to the chat being left
        self.conversation_id = conversation_id
        self.sidebar.set_current(conversation_id)
        self.picker.select(detail.conversation.model)
        self.picker.set_mode(detail.conversation.mode)
        self.assistant.show_conversation(detail.conversation)
        self.documents.update_label()
        self.documents.prepare()
        run = self.controller.active
        live = run if run is not None and run.conversation_id == conversation_id else None
        builders = builders_for(detail, self._wire_user, self._wire_turn,
                                skip_message=live.assistant_message_id if live else None)
        self.chat.set_history(builders)
        self.artifact_pane.clear()
        for artifact in detail.artifacts:
            self.artifact_pane.add_artifact(artifact.name, artifact.mime_type, artifact.content,
                                            show=False)
        self.live_turn = None
        if live is not None:  # the run is still working: a live turn catches up
            self.live_turn = self._wire_turn(self.chat.add_assistant())
            for event in list(live.events):
                apply_event(self.live_turn, event, self._add_artifact)
        self.composer.set_running(live is not None)
        save_state(last_conversation=conversation_id)
        self.spawn(self.branches.show())
        self.spawn(self.refresh_gauge())

    def _wire_user(self, widget: UserMessage) -> None:
        widget.edit_requested.connect(self._edit)
        widget.version_requested.connect(
            lambda w, version: self.spawn(self.branches.switch(w, version)))

    def _wire_turn(self, turn: AssistantTurn) -> AssistantTurn:
        turn.regenerate_requested.connect(lambda t: self.spawn(self.regenerate(t)))
        turn.citation_opened.connect(self.documents.open_citation)
        turn.ledger_requested.connect(lambda t: self.ledger_button.open(str(t.message_id)))
        turn.read_aloud_requested.connect(self.voice.read)
        if turn.message_id is not None:  # a stored answer: did it send anything?
            self.spawn(show_sent(turn))
        for card in turn.cards:  # reopened: a replaced file can still be put back
            offer_restore(self, card)
        return turn

    def _on_deleted(self, conversation_id: str) -> None:
        if conversation_id == self.conversation_id:
            if self.controller.is_running(conversation_id):
                self.controller.stop()
            self.new_conversation()

    def _show_model_in_empty_state(self) -> None:
        entry = self.picker.current_entry()
        if entry is not None:
            local = {"bundled": True, "local": True, "endpoint": False}.get(entry.kind)
            self.chat.empty.set_model(entry.name, local)

    async def _update_mode_advice(self) -> None:
        """Advise ReAct where DAG mode measured worse on this model (evaluation results)."""
        from desktop_app.core.evals.advice import dag_advice

        name = self.picker.current_model()
        if not name:
            return
        runs = await self.ctx.store.list_eval_runs(model=name, limit=20)
        self.picker.set_mode_advice(dag_advice(name, runs))

    def _model_changed(self, name: str) -> None:
        self._show_model_in_empty_state()
        self.spawn(self.refresh_gauge())
        self.spawn(self._update_mode_advice())
        if self.conversation_id:
            self.spawn(self.ctx.store.set_model(self.conversation_id, name))

    def _mode_changed(self, mode: str) -> None:
        if mode == "dag":
            self.spawn(self._update_mode_advice())
        if self.conversation_id:
            self.spawn(self.ctx.store.set_mode(self.conversation_id, mode))

    # --- sending --------------------------------------------------------------------------------
    async def send(self, text: str) -> None:
        """Send ``text`` as a new turn (or as the edited version of a message)."""
        if self.controller.active is not None:
            self.interrupt(text)
            return
        try:
            # Check the model before anything changes on screen: the error says what to do.
            self.ctx.registry.resolve(self.picker.current_model())
            editing = self.edits.take()
            if editing is not None:
                await self._truncate_from(editing)
            if self.conversation_id is None:
                conv = await self.ctx.store.create_conversation(
                    model=self.picker.current_model(), mode=self.picker.current_mode())
                self.conversation_id = conv.id
                await self.assistant.attach(conv.id)
                self.sidebar.set_current(conv.id)
                save_state(last_conversation=conv.id)
        except Exception:
            # Not sent (no model, a full disk): the message goes back where it was typed.
            self.composer.restore_draft(text)
            raise
        user = self._wire_user_return(self.chat.add_user(text))
        self.live_turn = self._wire_turn(self.chat.add_assistant())
        self.live_turn.start_thinking(1)
        self.composer.set_running(True)
        self._live_user = user
        self.controller.start(self.conversation_id, text, model=self.picker.current_model(),
                              mode=self.picker.current_mode())

    def _wire_user_return(self, widget: UserMessage) -> UserMessage:
        self._wire_user(widget)
        return widget

    def interrupt(self, text: str) -> None:
        if self.controller.active is None:
            self.spawn(self.send(text))
            return
        self.spawn(self.controller.interrupt(text))

    def _escape(self) -> None:
        if self.voice.cancel():  # dictating: stop, and the message box is as it was
            return
        if self.edits.active:
            self.edits.cancel()
        elif self.controller.active is not None:
            self.controller.stop()

    async def regenerate(self, turn: AssistantTurn) -> None:
        """Ask the same question again: drop this turn (and what follows) and resend."""
        if self.controller.active is not None:
            return
        items = self.chat.items()
        index = items.index(turn) if turn in items else -1
        user = next((w for w in reversed(items[:index]) if isinstance(w, UserMessage)), None)
        if user is None:
            return
        text = user.text
        await self._truncate_from(user)
        await self.send(text)

    def _edit(self, widget: UserMessage) -> None:
        if self.controller.active is None:
            self.edits.start(widget)

    async def _truncate_from(self, widget: UserMessage) -> None:
        if widget.message_id is not None:
            # Kept as a version of its own (‹ 1/2 ›), not deleted.
            await self.ctx.store.fork_from(widget.message_id)
        self.chat.remove_from(widget)

    # --- closing --------------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self.is_closed = True
        save_state(geometry=bytes(self.saveGeometry().toBase64()).decode())
        self.controller.stop()
        self.documents.stop_watching()
        super().closeEvent(event)
        self.closed.emit()
