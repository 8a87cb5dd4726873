"""Configuration, at the bottom of ``core``: the settings file and where API keys live.

- ``settings``: the settings model, loading (with salvage of bad files) and atomic saving;
  ``migrations``: upgrades of older settings files;
- ``secrets``: API keys, only in the OS keyring (or an environment variable the user names).

The LLM factory, the tools, the store and the UI read configuration from here; nothing
here imports them. Nothing is imported here, so importing one part does not load the others.
"""
