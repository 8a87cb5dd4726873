"""The API server in the window (issue 28): the status-bar switch starts it on the
window's own models, other programs use it with the key, the bar shows requests being
served, the dialog gives the address, key and an example, and it stops again."""

from __future__ import annotations

import asyncio
import threading

import httpx2 as httpx
import openai
import pytest
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM

pytestmark = pytest.mark.gui


def test_the_switch_serves_the_window_s_models_to_other_programs(qtbot, loop,
                                                                memory_keyring) -> None:
    llm = ScriptedLLM(["Served answer."] * 3, model_id="local-m", delay=0.3)

    async def scenario():
        window = await make_window(qtbot, llm)
        window.ctx.settings.api_server.port = 0  # any free port
        switch = window.api_switch
        assert switch.text() == "API: off" and switch.isVisible()
        dialog = switch.open()
        dialog.toggle.click()
        await wait_for(lambda: window.api_server.running, timeout=20)
        assert switch.text().startswith("API on :")
        base, key = dialog.address.text(), dialog.key.text()
        assert base.startswith("http://127.0.0.1:") and key.startswith("dak-")
        assert memory_keyring.store[("desktop-app", "api-server")] == key  # only there
        assert key not in dialog.example.toPlainText() and base in dialog.example.toPlainText()
        dialog.show_key.click()  # shown on request, in the field and the example
        assert key in dialog.example.toPlainText()
        dialog.copy_example.click()
        from PySide6.QtGui import QGuiApplication

        assert key in QGuiApplication.clipboard().text()
        statuses: list[str] = []
        answers: list[str] = []

        def call() -> None:  # another program, on its own thread
            client = openai.OpenAI(base_url=base, api_key=key)
            answers.append(client.chat.completions.create(
                model="local-m", messages=[{"role": "user", "content": "hi"}]
            ).choices[0].message.content)

        other = threading.Thread(target=call)
        other.start()
        await wait_for(lambda: "serving 1 request" in switch.text(), timeout=20)
        statuses.append(switch.text())
        while other.is_alive():
            await asyncio.sleep(0.05)
        refused = await asyncio.to_thread(httpx.get, f"{base}/models")
        dialog.toggle.click()
        await wait_for(lambda: switch.text() == "API: off", timeout=20)
        return answers, statuses, refused.status_code, switch.text(), base

    answers, statuses, refused, after, base = loop.run_until_complete(scenario())
    assert answers == ["Served answer."] and refused == 401
    assert statuses and after == "API: off"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{base}/models", timeout=5)  # stopped: the port is closed


def test_hosted_models_are_served_only_once_ticked(qtbot, loop, memory_keyring) -> None:
    from PySide6.QtCore import Qt

    from desktop_app.core.config.settings import EndpointModelConfig, Settings
    from desktop_app.core.llm.factory import build_registry

    settings = Settings(endpoints=[EndpointModelConfig(
        name="cloud", base_url="https://api.example.com/v1", model="m")])

    async def scenario():
        window = await make_window(qtbot, settings=settings)
        window.ctx.registry = build_registry(settings)
        window.ctx.settings.api_server.port = 0
        dialog = window.api_switch.open()
        dialog.toggle.click()
        await wait_for(lambda: window.api_server.running, timeout=20)
        before = window.api_server.server.pool.served()
        [item] = [dialog.hosted.item(i) for i in range(dialog.hosted.count())]
        item.setCheckState(Qt.CheckState.Checked)
        after = window.api_server.server.pool.served()
        await window.api_server.stop()
        return before, after, window.ctx.settings.api_server.hosted

    before, after, remembered = loop.run_until_complete(scenario())
    assert "cloud" not in before and "cloud" in after and remembered == ["cloud"]
