"""The one point every connection the app makes passes (SPEC §11), behind one entry.

* ``guard(url, purpose)`` — the offline lock: refuses a destination off this computer before
  any DNS lookup or connection (``lock``).
* ``async_client(purpose)`` / ``client(purpose)`` — the HTTP clients the app's connections
  use (hosted models through the openai SDK, the model hub through huggingface_hub, the
  downloader): each request is checked by the lock and recorded in the privacy ledger with
  its destination, purpose, conversation and message, bytes both ways and the exact content
  sent (``transport``).
* ``serving(conversation_id, message_id)`` — which conversation and message the requests
  made inside it serve; ``purpose(...)`` names what they are for.
* ``ledger()`` — the record of what left the computer (``ledger``).
"""

from __future__ import annotations

from desktop_app.core.egress.context import purpose, serve_in_this_task, serving
from desktop_app.core.egress.ledger import (
    EgressRecord,
    Ledger,
    flush_all,
    human_bytes,
    ledger,
    local_time,
)
from desktop_app.core.egress.lock import (
    OfflineBlockedError,
    guard,
    is_local_host,
    is_local_url,
    is_offline,
    set_offline,
)
from desktop_app.core.egress.transport import async_client, client

__all__ = ["EgressRecord", "Ledger", "OfflineBlockedError", "async_client", "client", "flush_all", "guard", "human_bytes",
           "is_local_host", "is_local_url", "is_offline", "ledger", "local_time", "purpose", "serve_in_this_task", "serving",
           "set_offline"]
