"""The event protocol of runs and plans (SPEC §8): plain pydantic models with no
dependency on the engine, so the store, the context guard and the UI can import them
from the bottom of ``core``."""
