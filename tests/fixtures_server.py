"""Session fixture for a real loopback OpenAI-compatible server (filled in by the adapter work)."""
