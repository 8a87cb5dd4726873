"""desktop-app: a private, local-first desktop chat assistant with a tool-using agent engine."""

__version__ = "0.1.0"
