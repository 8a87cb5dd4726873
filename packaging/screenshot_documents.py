"""The Documents shots of packaging/screenshot.py: a collection indexed in the Documents
window (one file that cannot be read, listed with its reason), a cited answer in a chat
with the collection attached, and the cited document opened at the passage."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

MANUAL = """# WX-200 washing machine

## Warranty

The WX-200 is covered by a 24-month warranty from the date of purchase. Keep the receipt:
the serial number is on the inside of the door.

## Error codes

E21: the water does not drain. Switch the machine off and clean the pump filter behind the
small flap at the lower right of the front panel.
"""
LEASE = """# Lease agreement, Flat 4B

## Rent

The monthly rent is 1,150 EUR, due on the 3rd day of each month.

## Ending the lease

Either party may end the lease in writing with a notice period of three months.
"""


async def documents_shots(window: Any, grab: Any, settle: Any) -> None:
    from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply

    folder = Path(tempfile.mkdtemp(prefix="desktop-app-shot-docs-")) / "Manuals"
    folder.mkdir()
    (folder / "washer-manual.md").write_text(MANUAL, encoding="utf-8")
    (folder / "lease.md").write_text(LEASE, encoding="utf-8")
    (folder / "scan.pdf").write_bytes(b"%PDF-1.4 damaged")
    window.documents.open_window()
    documents = window.documents.documents_window
    documents.add_paths("Manuals", [folder])
    await documents.wait()
    await settle(0.6)
    grab(documents, "11-documents.png")
    documents.close()

    answer = ("The WX-200 is covered for **24 months** from the date of purchase [1]; keep the "
              "receipt, since the serial number is inside the door [1].")
    search = tool_call_reply(("search_documents", {"query": "washing machine warranty"}))
    model = ScriptedLLM([search, answer, answer], model_id="docs-demo", tool_call=True,
                        delay=0.02, chunk_size=6)
    window.ctx.registry.register("docs-demo", model)
    window.picker.set_registry(window.ctx.registry, "docs-demo")
    window.new_conversation()
    window.documents.set_attached("Manuals", True)
    await window.send("How long is the warranty on my washing machine?")
    await window.controller.wait_idle()
    await settle(0.8)
    grab(window, "12-cited-answer.png")
    turn = [t for t in window.chat.items() if getattr(t, "cards", None)][-1]
    turn.answer.citation_clicked.emit(1)
    viewer = window.documents.viewers[-1]
    for _ in range(50):
        if viewer.target is not None:
            break
        await settle(0.1)
    await settle(0.4)
    grab(viewer, "13-document-viewer.png")
    viewer.close()
    window.documents.set_attached("Manuals", False)
