"""The main window's handling of a run's events: the live answer turn, confirmations, the
follow-up turn started by late interrupts, save failures, the end of a run, artifacts.

A mixin of ``MainWindow`` (its widgets and controller are the window's own)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import shiboken6

from desktop_app.ui.message_widgets import AssistantTurn
from desktop_app.ui.privacy_ledger import show_sent
from desktop_app.ui.restore_previous import offer_restore
from desktop_app.ui.run_render import apply_event

if TYPE_CHECKING:
    from desktop_app.core.agent.events import Event
    from desktop_app.ui.run_controller import ActiveRun


class WindowRunEvents:
    """Run events into the window (mixed into ``MainWindow``)."""

    live_turn: AssistantTurn | None
    conversation_id: str | None
    _live_user: Any
    chat: Any
    composer: Any
    controller: Any
    sidebar: Any
    branches: Any
    voice: Any
    ctx: Any
    picker: Any
    artifact_pane: Any
    artifact_dock: Any
    artifacts_button: Any


    # --- run events -----------------------------------------------------------------------------
    def _turn_for(self, conversation_id: str) -> AssistantTurn | None:
        turn = self.live_turn
        if conversation_id != self.conversation_id or turn is None or not shiboken6.isValid(turn):
            return None
        return turn

    def _on_run_started(self, conversation_id: str, run: ActiveRun) -> None:
        turn = self._turn_for(conversation_id)
        if turn is not None:
            turn.message_id = run.assistant_message_id
            turn.user_message_id = run.user_message_id
            user = self._live_user
            if user is not None and shiboken6.isValid(user) and user.message_id is None:
                user.message_id = run.user_message_id
        elif conversation_id == self.conversation_id and self.live_turn is None:
            # A follow-up turn started by interrupts that arrived after the last run.
            self.live_turn = self._wire_turn(self.chat.add_assistant())
            self.live_turn.message_id = run.assistant_message_id
            self.composer.set_running(True)
        self.spawn(self.sidebar.refresh())

    def _on_event(self, conversation_id: str, event: Event) -> None:
        if event.channel == "confirm":
            from desktop_app.ui.confirm_dialog import ConfirmDialog

            dialog = ConfirmDialog(event, self.controller.answer_confirm, self)  # type: ignore[arg-type]
            dialog.open()
        turn = self._turn_for(conversation_id)
        if turn is not None:
            apply_event(turn, event, self._add_artifact)
            self.voice.on_answer_event(event)
            if getattr(event, "tool_name", None) == "write_file":
                for card in turn.cards:
                    offer_restore(self, card)

    def _on_interrupt_added(self, conversation_id: str, text: str) -> None:
        turn = self._turn_for(conversation_id)
        if turn is not None:
            turn.add_interrupt(text)
            self.chat.scroll_to_bottom()

    def _on_save_failed(self, conversation_id: str, message: str) -> None:
        turn = self._turn_for(conversation_id)
        text = (f"This answer is shown but could not be saved: {message} "
                "Copy it now if you need it; check free disk space.")
        if turn is not None:
            turn.add_error(text)
        else:
            self.show_error(text)

    def _on_run_finished(self, conversation_id: str, _done: object) -> None:
        from desktop_app.ui.confirm_dialog import ConfirmDialog

        for dialog in self.findChildren(ConfirmDialog):  # the question is moot now
            if dialog.isVisible():
                dialog.reject()
        if conversation_id == self.conversation_id:
            self.composer.set_running(False)
            if self.live_turn is not None:
                self.spawn(show_sent(self.live_turn))
            self.live_turn = None
            self.spawn(self.refresh_gauge())
            self.spawn(self.branches.show())  # an edited question now has versions
        self.spawn(self.sidebar.refresh())

    async def refresh_gauge(self) -> None:
        """Recount what the next request carries (conversation, tools) for the gauge."""
        from desktop_app.ui.context_gauge import refresh

        await refresh(self.composer, self.ctx, self.picker.current_entry(),
                      lambda: self.conversation_id)

    # --- artifacts ------------------------------------------------------------------------------
    def _add_artifact(self, name: str, mime_type: str, content: str) -> None:
        self.artifact_pane.add_artifact(name, mime_type, content)
        self.artifact_dock.open()

    def _artifact_count(self, count: int) -> None:
        self.artifacts_button.setText(f"Artifacts ({count})" if count else "Artifacts")
