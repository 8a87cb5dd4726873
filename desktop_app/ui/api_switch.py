"""The local API server in the window (issue 28): a status-bar switch ("API on :8765 ·
serving 1") and a dialog with the address, the key and an example to copy.

The server runs on the window's event loop over the window's model registry and its
loader, so a request from another program and a message typed here share one loaded copy
of each model. The key is read from (or made in) the keyring on a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)


def example(base_url: str, key: str, model: str) -> str:
    """What a user copies into a terminal or a script."""
    return (f"curl {base_url}/chat/completions \\\n"
            f"  -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' \\\n"
            f"  -d '{{\"model\": \"{model}\", \"messages\": "
            "[{\"role\": \"user\", \"content\": \"Hello!\"}]}'\n\n"
            "# Python (pip install openai)\n"
            "from openai import OpenAI\n"
            f"client = OpenAI(base_url=\"{base_url}\", api_key=\"{key}\")\n"
            f"print(client.chat.completions.create(model=\"{model}\", messages=[\n"
            "    {\"role\": \"user\", \"content\": \"Hello!\"}]).choices[0].message.content)\n")


class ApiServerControl:
    """Starts and stops the window's server; tells the switch what it is doing."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.server: Any = None
        self.key: str | None = None
        self.listeners: list[Callable[[], None]] = []

    @property
    def running(self) -> bool:
        return self.server is not None

    async def start(self) -> None:
        from desktop_app.core.api_server import ApiServer, ServerOptions
        from desktop_app.core.api_server.keys import server_key

        if self.server is not None:
            return
        ctx = self.window.ctx
        key, _made = await asyncio.to_thread(server_key)
        server = ApiServer(ctx.registry, ServerOptions(port=ctx.settings.api_server.port,
                                                       api_key=key,
                                                       hosted=ctx.settings.api_server.hosted),
                           loader=self.window.controller.ensure_llm, tools=ctx.tools)
        await server.start()
        server.pool.on_change = lambda _count: self._changed()
        self.server, self.key = server, key
        self._remember(True)
        self._changed()

    async def stop(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            await server.stop()
        self._remember(False)
        self._changed()

    def hosted_choices(self) -> list[tuple[str, bool]]:
        """The app's hosted endpoints and whether each is served."""
        chosen = set(self.window.ctx.settings.api_server.hosted)
        return [(entry.name, entry.name in chosen)
                for entry in self.window.ctx.registry.entries() if entry.kind == "endpoint"]

    def set_hosted(self, names: list[str]) -> None:
        def change(settings: Any) -> bool:
            settings.api_server.hosted = list(names)
            return True

        self.window.spawn(self.window.ctx.update_settings(change))
        if self.server is not None:
            self.server.pool.set_hosted(names)
        self._changed()

    def status(self) -> str:
        if self.server is None:
            return "API: off"
        text = f"API on :{self.server.port}"
        serving = self.server.serving
        return text + (f" · serving {serving} request{'s' if serving != 1 else ''}"
                       if serving else "")

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()

    def _remember(self, on: bool) -> None:
        if self.window.ctx.settings.api_server.enabled == on:
            return

        def change(settings: Any) -> bool:
            if settings.api_server.enabled == on:
                return False
            settings.api_server.enabled = on
            return True

        self.window.spawn(self.window.ctx.update_settings(change))


class ApiSwitch(QToolButton):
    """The status bar's "API: off" / "API on :8765 · serving 1"; a click opens the dialog."""

    def __init__(self, control: ApiServerControl, spawn: Callable[[Any], Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.control = control
        self._spawn = spawn
        self.setObjectName("ApiSwitch")
        self.setToolTip("Let other programs on this computer use the models through an "
                        "OpenAI-compatible API")
        control.listeners.append(self.refresh)
        self.clicked.connect(lambda: self.open())
        self.refresh()

    def refresh(self) -> None:
        self.setText(self.control.status())

    def open(self) -> ApiServerDialog:
        dialog = ApiServerDialog(self.control, self._spawn, self.window())
        dialog.show()
        return dialog


class ApiServerDialog(QDialog):
    """Start/stop, the address, the key (hidden until shown), an example to copy."""

    def __init__(self, control: ApiServerControl, spawn: Callable[[Any], Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.control = control
        self._spawn = spawn
        self.setWindowTitle("Local API server")
        self.resize(640, 460)
        self.state = QLabel(self)
        self.state.setWordWrap(True)
        self.toggle = QPushButton(self)
        self.toggle.clicked.connect(self._toggle)
        self.address = QLineEdit(self)
        self.address.setReadOnly(True)
        self.key = QLineEdit(self)
        self.key.setReadOnly(True)
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.show_key = QPushButton("Show", self)
        self.show_key.clicked.connect(self._reveal)
        self.copy_key = QPushButton("Copy key", self)
        self.copy_key.clicked.connect(lambda: QGuiApplication.clipboard().setText(
            self.control.key or ""))
        self.example = QPlainTextEdit(self)
        self.example.setReadOnly(True)
        self.hosted = QListWidget(self)
        self.hosted.setMaximumHeight(90)
        for name, chosen in control.hosted_choices():
            item = QListWidgetItem(name, self.hosted)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if chosen else Qt.CheckState.Unchecked)
        self.hosted.itemChanged.connect(lambda _item: control.set_hosted([
            self.hosted.item(i).text() for i in range(self.hosted.count())
            if self.hosted.item(i).checkState() == Qt.CheckState.Checked]))
        self.copy_example = QPushButton("Copy example", self)
        self.copy_example.clicked.connect(lambda: QGuiApplication.clipboard().setText(
            self._example(self.control.key or "KEY")))
        key_row = QHBoxLayout()
        key_row.addWidget(self.key, 1)
        key_row.addWidget(self.show_key)
        key_row.addWidget(self.copy_key)
        layout = QVBoxLayout(self)
        layout.addWidget(self.state)
        layout.addWidget(self.toggle)
        layout.addWidget(QLabel("Address (OpenAI base URL)", self))
        layout.addWidget(self.address)
        layout.addWidget(QLabel("API key (kept in your keyring)", self))
        layout.addLayout(key_row)
        if self.hosted.count():
            layout.addWidget(QLabel("Also serve these hosted models (their providers see "
                                    "those requests; each is in the privacy ledger)", self))
            layout.addWidget(self.hosted)
        layout.addWidget(QLabel("Try it", self))
        layout.addWidget(self.example, 1)
        layout.addWidget(self.copy_example)
        control.listeners.append(self.refresh)
        self.finished.connect(lambda _code: self._detach())
        self.refresh()

    def _detach(self) -> None:
        if self.refresh in self.control.listeners:
            self.control.listeners.remove(self.refresh)

    def refresh(self) -> None:
        server = self.control.server
        running = server is not None
        self.toggle.setText("Stop the server" if running else "Start the server")
        for widget in (self.address, self.key, self.show_key, self.copy_key, self.example,
                       self.copy_example):
            widget.setEnabled(running)
        if server is None:
            self.state.setText("Off. When on, programs on this computer (editors, notebooks, "
                               "scripts, other chat apps) can use the models here through "
                               "the OpenAI API, with the key. Nothing leaves the computer.")
            self.address.clear()
            self.key.clear()
            self.example.clear()
            return
        serving = server.serving
        self.state.setText(
            f"On, listening on 127.0.0.1:{server.port} (this computer only). Models: "
            f"{', '.join(server.pool.served())}."
            + (f" Serving {serving} request{'s' if serving != 1 else ''} now." if serving
               else ""))
        self.address.setText(server.base_url)
        self.key.setText(self.control.key or "")
        self._show_example()

    def _example(self, key: str) -> str:
        server = self.control.server
        if server is None:
            return ""
        models = [n for n in server.pool.served() if n != "desktop-app-agent"]
        return example(server.base_url, key, models[0] if models else "desktop-app-agent")

    def _show_example(self) -> None:
        # The key shows in the example only while it is shown above; a copy always has it.
        shown = self.key.echoMode() == QLineEdit.EchoMode.Normal
        self.example.setPlainText(self._example(self.control.key or "" if shown else "KEY"))

    def _reveal(self) -> None:
        shown = self.key.echoMode() == QLineEdit.EchoMode.Normal
        self.key.setEchoMode(QLineEdit.EchoMode.Password if shown
                             else QLineEdit.EchoMode.Normal)
        self.show_key.setText("Show" if shown else "Hide")
        self._show_example()

    def _toggle(self) -> None:
        self.toggle.setEnabled(False)
        task = self._spawn(self.control.stop() if self.control.running
                           else self.control.start())
        task.add_done_callback(lambda _t: self.toggle.setEnabled(True))
        self.task = task
