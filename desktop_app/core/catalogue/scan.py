"""GGUF models other apps already downloaded, found in their default folders.

Adding one means pointing a local model at the file where it is: nothing is copied (a
7B model is 4-5 GB). Where each app keeps its models (checked against their docs and
source; environment variables where the app honours one):

* LM Studio: ``~/.lmstudio/models`` (``~/.cache/lm-studio/models`` before 0.3),
  ``publisher/repo/file.gguf``;
* Ollama: ``~/.ollama/models`` (``$OLLAMA_MODELS``; the Linux service uses
  ``/usr/share/ollama/.ollama/models``): weights are content-addressed blobs named by the
  manifests under ``manifests/<registry>/<namespace>/<model>/<tag>``;
* Hugging Face cache: ``$HF_HUB_CACHE`` or ``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``,
  ``models--org--name/snapshots/<revision>/file.gguf``;
* GPT4All: ``~/.local/share/nomic.ai/GPT4All``; Jan: ``~/jan/models`` and
  ``~/.local/share/Jan/data/models``; llama.cpp's own cache ``~/.cache/llama.cpp``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Files that are not a chat model's weights: vision projectors, vocabulary-only files.
#: (Unfinished downloads, "x.gguf.part" and the like, fail the ".gguf" ending test.)
_NOT_MODELS = ("mmproj", "ggml-vocab")
_OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
#: How Ollama names a blob: the digest's algorithm and hex value ("sha256-<64 hex>").
_DIGEST = re.compile(r"[a-z0-9]+-[0-9a-f]+")


@dataclass(frozen=True)
class FoundModel:
    """A GGUF file another app keeps."""

    app: str
    name: str
    path: Path
    size: int


def app_folders(home: Path | None = None,
                environ: dict[str, str] | None = None) -> list[tuple[str, Path]]:
    """(app, folder) pairs to look in, in the order people are likely to have them."""
    home = home or Path.home()
    env = os.environ if environ is None else environ
    hf_cache = (Path(env["HF_HUB_CACHE"]) if env.get("HF_HUB_CACHE")
                else Path(env["HF_HOME"]) / "hub" if env.get("HF_HOME")
                else home / ".cache" / "huggingface" / "hub")
    ollama = [Path(env["OLLAMA_MODELS"])] if env.get("OLLAMA_MODELS") else []
    ollama += [home / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]
    return [
        ("LM Studio", home / ".lmstudio" / "models"),
        ("LM Studio", home / ".cache" / "lm-studio" / "models"),
        *(("Ollama", folder) for folder in ollama),
        ("Hugging Face cache", hf_cache),
        ("GPT4All", home / ".local" / "share" / "nomic.ai" / "GPT4All"),
        ("Jan", home / "jan" / "models"),
        ("Jan", home / ".local" / "share" / "Jan" / "data" / "models"),
        ("llama.cpp", home / ".cache" / "llama.cpp"),
    ]


def scan_other_apps(home: Path | None = None,
                    environ: dict[str, str] | None = None) -> list[FoundModel]:
    """Every GGUF model in the other apps' folders, each file once (first app wins)."""
    found: list[FoundModel] = []
    seen: set[Path] = set()
    for app, folder in app_folders(home, environ):
        try:
            if not folder.is_dir():
                continue
        except OSError:  # an unreadable parent folder: nothing to find there
            continue
        models = _ollama_models(folder) if app == "Ollama" else _gguf_files(app, folder)
        for model in models:
            try:
                real = model.path.resolve()
            except OSError:
                continue
            if real not in seen:
                seen.add(real)
                found.append(model)
    return found


def _gguf_files(app: str, folder: Path) -> Iterator[FoundModel]:
    for root, dirs, files in os.walk(folder, onerror=lambda _error: None):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "blobs")
        for file_name in sorted(files):
            lower = file_name.lower()
            if not lower.endswith(".gguf") or lower.startswith(_NOT_MODELS):
                continue
            path = Path(root) / file_name
            try:
                info = path.stat()  # follows the HF cache's symlinks into blobs
            except OSError:
                continue  # a dangling link: the blob was deleted
            if not stat.S_ISREG(info.st_mode):
                continue  # a FIFO or device named *.gguf would hang whoever opens it
            size = info.st_size
            yield FoundModel(app, _display_name(app, folder, path), path, size)


def _display_name(app: str, folder: Path, path: Path) -> str:
    if app == "Hugging Face cache":
        repo = next((p.name for p in path.parents if p.name.startswith("models--")), "")
        if repo:
            return repo.removeprefix("models--").replace("--", "/", 1) + "/" + path.name
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return path.name


def _ollama_models(folder: Path) -> Iterator[FoundModel]:
    """Ollama's models: each manifest names its weights blob by digest."""
    manifests = folder / "manifests"
    for root, _dirs, files in os.walk(manifests, onerror=lambda _error: None):
        for tag in sorted(files):
            manifest = Path(root) / tag
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            layers = data.get("layers") if isinstance(data, dict) else None
            for layer in layers if isinstance(layers, list) else []:
                if not isinstance(layer, dict) or layer.get("mediaType") != _OLLAMA_MODEL_LAYER:
                    continue
                digest = str(layer.get("digest", "")).replace(":", "-")
                if not _DIGEST.fullmatch(digest):
                    continue  # "../../x" would lead out of the blobs folder
                blob = folder / "blobs" / digest
                try:
                    info = blob.stat()
                except OSError:
                    continue
                if not stat.S_ISREG(info.st_mode):
                    continue
                size = info.st_size
                model = manifest.parent.name
                namespace = manifest.parent.parent.name
                name = f"{model}:{tag}" if namespace == "library" else f"{namespace}/{model}:{tag}"
                yield FoundModel("Ollama", name, blob, size)
