"""A real crash: a child process streams an answer into the store and is SIGKILLed.

The parent then reopens the database like the app's next start would and checks that the
user's message and everything flushed before the kill are there, that the answer is marked
``interrupted``, and that SQLite reports the file intact.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from desktop_app.core.store.conversation_store import ConversationStore

pytestmark = pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")

CHILD = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from desktop_app.core.store.async_store import AsyncStore
    from desktop_app.core.store.streaming import StreamingAnswerWriter

    async def main() -> None:
        store = await AsyncStore.open(Path(sys.argv[1]))
        conv = await store.create_conversation("crash test")
        await store.add_message(conv.id, "user", "tell me a long story")
        print("READY", conv.id, flush=True)
        # The production default flush interval (1 s), not a test-only value.
        writer = StreamingAnswerWriter(
            store, conv.id, model="fake",
            on_flush=lambda text: print("FLUSHED", len(text), flush=True))
        await writer.start()
        i = 0
        while True:  # an endless answer: only SIGKILL ends it
            writer.append(f"word{i} ")
            i += 1
            await asyncio.sleep(0.005)

    asyncio.run(main())
""")


def _expected_text(length: int) -> str:
    text, i = "", 0
    while len(text) < length:
        text += f"word{i} "
        i += 1
    return text


def test_sigkill_mid_answer_keeps_flushed_text_and_integrity(tmp_path: Path,
                                                             db_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    repo = Path(__file__).resolve().parents[2]
    child = subprocess.Popen([sys.executable, str(script), str(db_path)], cwd=repo,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    flushed: list[int] = []
    conv_id = ""
    try:
        assert child.stdout is not None
        deadline = time.monotonic() + 60
        while len(flushed) < 2 and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            if line.startswith("READY"):
                conv_id = line.split()[1]
            elif line.startswith("FLUSHED"):
                flushed.append(int(line.split()[1]))
        assert len(flushed) == 2, child.stderr.read() if child.stderr else ""
        time.sleep(0.3)  # mid-way to the next flush: some text exists only in memory
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert flushed[1] > flushed[0] > 0
    assert (db_path.parent / (db_path.name + "-wal")).exists()  # not cleanly closed

    store = ConversationStore(db_path)  # the next start
    try:
        assert store.integrity_check() == "ok"
        assert store.recovered == 1
        user, answer = store.list_messages(conv_id)
        assert (user.role, user.content, user.status) == \
            ("user", "tell me a long story", "complete")
        assert (answer.role, answer.status, answer.model) == ("assistant", "interrupted", "fake")
        # Everything up to the last reported flush is there, and it is exactly the stream.
        assert len(answer.content) >= flushed[-1]
        assert answer.content == _expected_text(len(answer.content))[:len(answer.content)]
        assert answer.content.endswith(" ")  # flushed between deltas, never mid-token
        # The crashed answer is searchable and the conversation can be continued.
        assert store.search("word1")[0].message_id == answer.id
        history = store.load_history(conv_id)
        assert [m.role for m in history] == ["user", "assistant"]
    finally:
        store.close()
