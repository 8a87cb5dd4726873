"""Persistence: conversations in SQLite (settings and API keys: ``core/config``).

- ``conversation_store.ConversationStore``: the synchronous store (CLI, tests, one thread);
  ``async_store.AsyncStore``: the same API awaited, all SQLite work off the event loop.
- ``streaming.StreamingAnswerWriter`` and ``run_recorder.RunRecorder``: crash-safe
  recording of a streamed answer / a whole agent run.
- ``search``: FTS5 full-text search; ``exporting`` / ``importing`` / ``chatgpt``: Markdown
  and JSON export, import of our JSON and ChatGPT's export.
- ``migrations``: schema versions of the database.

Nothing is imported here, so importing one part does not load the others.
"""
