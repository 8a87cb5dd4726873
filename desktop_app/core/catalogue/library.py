"""The user's local models in settings: add a GGUF where it lies, remove one, find one.

A model the app downloaded lives under ``paths.models_dir() / "hub"``; removing it deletes
its files (every part of a split model) and says how much space that freed. A model added
from elsewhere (another app's folder, a dropped file) is only forgotten: the file belongs
to whoever put it there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.catalogue.fit import available_memory, estimate_memory
from desktop_app.core.catalogue.gguf_meta import GgufInfo, read_gguf
from desktop_app.core.config.settings import LocalModelConfig, Settings
from desktop_app.core.errors import ConfigError

#: Context given to a newly added model: what it was trained for, up to this.
DEFAULT_CONTEXT = 8192
MIN_CONTEXT = 2048


def downloads_dir() -> Path:
    """Where the app keeps the models it downloaded."""
    return paths.models_dir() / "hub"


def repo_folder(repo: str) -> Path:
    """The folder of one hub repo's downloads."""
    return downloads_dir() / repo.replace("/", "--")


def is_app_download(path: Path) -> bool:
    try:
        path.resolve().relative_to(downloads_dir().resolve())
    except (ValueError, OSError):
        return False
    return True


def _unique_name(settings: Settings, wanted: str) -> str:
    taken = {m.name for m in settings.local_models} | {e.name for e in settings.endpoints}
    taken.add(settings.bundled.name)
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}-{number}", number + 1
    return name


def default_name(info: GgufInfo) -> str:
    """A short name people can type: the file's stem, lower case, split suffix dropped."""
    stem = re.sub(r"-\d{5}-of-\d{5}$", "", info.path.stem)
    return re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-") or "model"


def suggested_context(info: GgufInfo, free: int | None = None) -> int:
    """The trained context up to ``DEFAULT_CONTEXT``, halved while it would not fit."""
    context = min(info.context_length or DEFAULT_CONTEXT, DEFAULT_CONTEXT)
    free = available_memory() if free is None else free
    while free and context > MIN_CONTEXT and estimate_memory(info, context).total > free * 0.8:
        context //= 2
    return max(context, min(MIN_CONTEXT, info.context_length or MIN_CONTEXT))


def suggested_gpu_layers(info: GgufInfo, context: int) -> int:
    """As many layers as fit on the GPU (0 for a CPU build of llama.cpp, or no GPU)."""
    from desktop_app.core.catalogue.fit import free_vram, gpu_layers_for, gpu_offload_supported

    if not gpu_offload_supported():
        return 0
    return gpu_layers_for(info, context, free_vram())


@dataclass(frozen=True)
class Added:
    config: LocalModelConfig
    info: GgufInfo
    already: bool


def add_local_model(settings: Settings, path: Path, *, name: str | None = None,
                    context_size: int | None = None) -> Added:
    """Add the GGUF at ``path`` to ``settings`` (not saved); the same file twice is one model.

    Raises ``ConfigError`` for a file that is not a readable GGUF model."""
    from desktop_app.core.catalogue.gguf_meta import GgufError

    path = path.expanduser().resolve()
    try:
        info = read_gguf(path)
    except (GgufError, OSError) as exc:
        raise ConfigError(f"{path} cannot be added: {exc}",
                          hint="Pick a .gguf model file (the first part, for a split model).")
    for existing in settings.local_models:
        if Path(existing.path).expanduser().resolve() == path:
            return Added(existing, info, already=True)
    context = context_size or suggested_context(info)
    config = LocalModelConfig(name=_unique_name(settings, name or default_name(info)),
                              path=str(path), context_size=context,
                              gpu_layers=suggested_gpu_layers(info, context))
    settings.local_models.append(config)
    return Added(config, info, already=False)


def find_local_model(settings: Settings, name: str) -> LocalModelConfig | None:
    return next((m for m in settings.local_models if m.name == name), None)


def remove_local_model(settings: Settings, name: str, *, delete_files: bool = True) -> int:
    """Forget ``name`` (not saved) and, if the app downloaded it, delete its files.

    Returns the bytes freed on disk. Raises ``ConfigError`` for an unknown name."""
    config = find_local_model(settings, name)
    if config is None:
        known = ", ".join(m.name for m in settings.local_models) or "none"
        raise ConfigError(f"There is no local model named '{name}'.",
                          hint=f"Local models: {known}.")
    settings.local_models.remove(config)
    if settings.default_model == name:
        settings.default_model = None
    settings.roles = {role: model for role, model in settings.roles.items() if model != name}
    path = Path(config.path)
    if not delete_files or not is_app_download(path):
        return 0
    freed = 0
    files = [path]
    try:
        files += read_gguf(path).split_parts
    except Exception:  # noqa: BLE001, S110 - a damaged file is deleted all the same
        pass
    for file in files:
        try:
            freed += file.stat().st_size
            file.unlink()
        except FileNotFoundError:
            continue
    try:
        path.parent.rmdir()  # the repo's folder, once empty
    except OSError:
        pass
    return freed


def resolve_model_file(settings: Settings, name_or_path: str) -> Path:
    """The GGUF file a model name (bundled or local) or a path stands for."""
    if name_or_path == settings.bundled.name:
        from desktop_app.core.llm.bundled import ensure_bundled_model

        return Path(ensure_bundled_model())
    config = find_local_model(settings, name_or_path)
    if config is not None:
        return Path(config.path).expanduser()
    candidate = Path(name_or_path).expanduser()
    if candidate.exists():
        return candidate
    known = ", ".join([settings.bundled.name, *(m.name for m in settings.local_models)])
    raise ConfigError(f"'{name_or_path}' is neither a local model nor a file.",
                      hint=f"Local models: {known}. Or give the path of a .gguf file.")
