"""Help for small local models, behind one entry: ``policy_for(llm)`` (SPEC §10).

Nothing here reads the request's words: decisions are the model's own, asked in a form a
small model answers well, so they hold in any language the model reads.
"""

from __future__ import annotations

from desktop_app.core.llm.base import LLM
from desktop_app.core.local_policy.routing import RoutingPolicy


def policy_for(llm: LLM) -> RoutingPolicy | None:
    """The policy for ``llm``: local models (a reusable prompt cache) get one, hosted
    models none."""
    return RoutingPolicy(llm) if llm.reuses_prompt_prefix else None


__all__ = ["RoutingPolicy", "policy_for"]
