"""The curated list of chat models for laptops (``resources/models/recommended.json``),
each with what a user decides by: size, licence, instruct-tuned, trained for tool calls,
and whether it fits this machine before anything is downloaded."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.catalogue.fit import Fit, Shape, estimate_memory, judge_fit

GB = 1000**3


@dataclass(frozen=True)
class Recommended:
    name: str
    size_class: str
    repo: str
    file: str
    approx_size: int
    parameters_b: float
    instruct: bool
    tools: bool
    licence: str
    shape: Shape
    context: int

    def fit(self, context_size: int, available: int | None) -> Fit:
        return judge_fit(estimate_memory(self.shape, min(context_size, self.context)),
                         available)


def load_recommended(path: Path | None = None) -> list[Recommended]:
    path = path or paths.resources_dir() / "models" / "recommended.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for item in data["models"]:
        size = int(float(item["approx_size_gb"]) * GB)
        out.append(Recommended(
            name=item["name"], size_class=item["size_class"], repo=item["repo"],
            file=item["file"], approx_size=size, parameters_b=float(item["parameters_b"]),
            instruct=bool(item["instruct"]), tools=bool(item["tools"]),
            licence=item["licence"], context=int(item["context"]),
            shape=Shape(weights=size, layers=item["layers"], heads=item["heads"],
                        kv_heads=item["kv_heads"], key_length=item["head_dim"],
                        value_length=item["head_dim"], vocabulary=item["vocabulary"])))
    return out
