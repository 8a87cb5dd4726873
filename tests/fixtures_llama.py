"""Session fixtures for the real bundled model (filled in by the llama.cpp adapter work)."""
