"""``desktop-app models search|pull|scan|add|info|bench|rm``: find, fit, download, add,
measure and remove local models (``desktop_app.core.catalogue`` does the work)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from desktop_app.core.catalogue import fit, hub, library
from desktop_app.core.catalogue.fit import size_text
from desktop_app.core.catalogue.gguf_meta import GgufError, read_gguf
from desktop_app.core.config.settings import load_settings, save_settings
from desktop_app.core.errors import ConfigError


def add_subcommands(actions: Any) -> None:
    p = actions.add_parser("search", help="search GGUF models on Hugging Face")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_search)

    p = actions.add_parser("pull", help="download a GGUF model from Hugging Face and add it",
                           description="Download REPO's FILE (default: its Q4_K_M, else the "
                                       "smallest quantisation) with resume and SHA-256 check, "
                                       "then add it as a local model. Without FILE and with "
                                       "--list, only list the quantisations.")
    p.add_argument("repo")
    p.add_argument("file", nargs="?")
    p.add_argument("--list", action="store_true", help="list the repo's quantisations only")
    p.add_argument("--name", help="the model's name in the app")
    p.set_defaults(func=_pull)

    p = actions.add_parser("scan", help="find GGUF models other apps downloaded")
    p.add_argument("--add", action="store_true", help="add every model found (no copying)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_scan)

    p = actions.add_parser("add", help="add a GGUF file where it is (no copying)")
    p.add_argument("path", type=Path)
    p.add_argument("--name")
    p.add_argument("--context", type=int, metavar="TOKENS")
    p.set_defaults(func=_add)

    p = actions.add_parser("info", help="a model's metadata and memory fit, without loading it")
    p.add_argument("model", metavar="NAME|PATH")
    p.add_argument("--context", type=int, metavar="TOKENS",
                   help="context size to estimate for (default: the model's setting)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_info)

    p = actions.add_parser("bench", help="measure a model's speed on this machine")
    p.add_argument("model", metavar="NAME|PATH")
    p.add_argument("--context", type=int, default=2048, metavar="TOKENS")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_bench)

    p = actions.add_parser("rm", help="remove a local model (and delete it if the app "
                                      "downloaded it)")
    p.add_argument("name")
    p.add_argument("--keep-file", action="store_true", help="only remove it from the app")
    p.set_defaults(func=_rm)


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def _search(args: argparse.Namespace) -> int:
    found = hub.search_models(args.query, limit=args.limit)
    if args.json:
        _print_json([vars(r) for r in found])
        return 0
    if not found:
        print(f"No GGUF models match '{args.query}'.")
        return 0
    width = max(len(r.repo) for r in found)
    for r in found:
        print(f"{r.repo.ljust(width)}  {r.downloads:>10,} downloads  {r.likes:>6,} likes")
    print("\nList a repo's files with: desktop-app models pull REPO --list")
    return 0


def _choose(models: list[hub.RemoteModel], wanted: str | None) -> hub.RemoteModel:
    if wanted:
        for model in models:
            if wanted in model.files or wanted.lower() == model.quantisation.lower():
                return model
        raise ConfigError(f"The repo has no file or quantisation '{wanted}'.",
                          hint="Run 'desktop-app models pull REPO --list' to see them.")
    preferred = [m for m in models if m.quantisation == "Q4_K_M"]
    return (preferred or models)[0]


def _progress_printer() -> Any:
    last = [0.0]

    def show(progress: hub.DownloadProgress) -> None:
        now = time.monotonic()
        if now - last[0] < 0.5 and progress.done < progress.total:
            return
        last[0] = now
        left = progress.seconds_left
        eta = f", {left:,.0f} s left" if left is not None else ""
        share = progress.done / progress.total * 100 if progress.total else 0
        print(f"\r{share:5.1f}%  {size_text(progress.done)} of {size_text(progress.total)}  "
              f"{progress.speed / 2**20:.1f} MiB/s{eta}   ", end="", file=sys.stderr, flush=True)

    return show


def _pull(args: argparse.Namespace) -> int:
    models = hub.list_quantisations(args.repo)
    if not models:
        raise ConfigError(f"{args.repo} has no GGUF files.",
                          hint="Search for a GGUF version: desktop-app models search NAME")
    if args.list:
        for model in models:
            parts = f" ({len(model.files)} parts)" if len(model.files) > 1 else ""
            print(f"{model.quantisation:<8} {size_text(model.size):>10}  {model.filename}{parts}")
        return 0
    model = _choose(models, args.file)
    folder = library.repo_folder(args.repo)
    print(f"Downloading {model.filename} ({size_text(model.size)}) to {folder}", file=sys.stderr)
    try:
        path = hub.download_model(model, folder, on_progress=_progress_printer())
    except KeyboardInterrupt:
        print("\nStopped; run the same command again to resume.", file=sys.stderr)
        return 130
    print(file=sys.stderr)
    settings = load_settings()
    added = library.add_local_model(settings, path, name=args.name)
    save_settings(settings)
    print(f"Added '{added.config.name}' (context {added.config.context_size:,} tokens): "
          f"desktop-app ask -m {added.config.name} \"...\"")
    return 0


def _scan(args: argparse.Namespace) -> int:
    from desktop_app.core.catalogue.scan import scan_other_apps

    found = scan_other_apps()
    if args.json:
        _print_json([{"app": m.app, "name": m.name, "path": str(m.path), "size": m.size}
                     for m in found])
    elif not found:
        print("No GGUF models found in the folders of LM Studio, Ollama, the Hugging Face "
              "cache, GPT4All, Jan or llama.cpp.")
    else:
        for m in found:
            print(f"{m.app:<20} {size_text(m.size):>10}  {m.name}\n{'':<20} {'':>10}  {m.path}")
    if args.add and found:
        settings = load_settings()
        for m in found:
            try:
                added = library.add_local_model(settings, m.path)
            except ConfigError as exc:
                print(f"skipped {m.path}: {exc}", file=sys.stderr)
                continue
            if not added.already:
                print(f"added '{added.config.name}'")
        save_settings(settings)
    return 0


def _add(args: argparse.Namespace) -> int:
    settings = load_settings()
    added = library.add_local_model(settings, args.path, name=args.name,
                                    context_size=args.context)
    if added.already:
        print(f"{args.path} is already the model '{added.config.name}'.")
        return 0
    save_settings(settings)
    print(f"Added '{added.config.name}' (context {added.config.context_size:,} tokens).")
    return 0


def _info(args: argparse.Namespace) -> int:
    settings = load_settings()
    path = library.resolve_model_file(settings, args.model)
    try:
        info = read_gguf(path)
    except GgufError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    config = library.find_local_model(settings, args.model)
    context = args.context or (config.context_size if config else
                               settings.bundled.context_size
                               if args.model == settings.bundled.name else 4096)
    estimate = fit.estimate_memory(info, context)
    verdict = fit.judge_fit(estimate, fit.available_memory())
    record = {
        "path": str(path), "name": info.name, "architecture": info.architecture,
        "parameters": info.parameters, "quantisation": info.quantisation,
        "file_size": info.total_size, "layers": info.layers, "attention_heads": info.heads,
        "kv_heads": info.kv_heads, "trained_context": info.context_length,
        "vocabulary": info.vocabulary_size, "chat_template": bool(info.chat_template),
        "tool_calls_in_template": "tool" in info.chat_template,
        "split_parts": len(info.split_parts) + 1,
        "memory": {"context_size": context, "weights": estimate.weights,
                   "kv_cache": estimate.kv_cache, "scratch": estimate.scratch,
                   "runtime": estimate.runtime, "at_load": estimate.at_load,
                   "full_context": estimate.total},
        "fit": {"verdict": verdict.verdict, "available": verdict.available,
                "explanation": verdict.explanation},
    }
    if args.json:
        _print_json(record)
        return 0
    print(f"{info.name}  ({path})")
    print(f"  {info.architecture}, {info.parameters / 1e9:.2f} B parameters, "
          f"{info.quantisation}, {size_text(info.total_size)} on disk"
          + (f" in {record['split_parts']} parts" if info.split_parts else ""))
    print(f"  {info.layers} layers, {info.heads} attention heads ({info.kv_heads} for keys/"
          f"values), trained context {info.context_length:,} tokens")
    print(f"  chat template: {'yes' if info.chat_template else 'no'}"
          f"{', with tool calls' if record['tool_calls_in_template'] else ''}")
    print(f"  memory at {context:,} tokens: {size_text(estimate.at_load)} when loaded, "
          f"{size_text(estimate.total)} with the context full")
    print(f"  {verdict.verdict.upper()}: {verdict.explanation}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from desktop_app.core.catalogue.bench import bench_model, model_key
    from desktop_app.core.store.conversation_store import ConversationStore

    settings = load_settings()
    path = library.resolve_model_file(settings, args.model)
    result = bench_model(path, context_size=args.context,
                         on_step=lambda text: print(f"... {text}", file=sys.stderr))
    name = args.model if library.find_local_model(settings, args.model) or \
        args.model == settings.bundled.name else path.name
    with ConversationStore() as store:
        store.save_benchmark(model_key=model_key(path), model_name=name,
                             results=result.as_dict())
    if args.json:
        _print_json({"model": name, "path": str(path), **result.as_dict()})
        return 0
    print(f"{name} on this machine ({result.threads} threads, context {result.context_size:,}):")
    print(f"  load            {result.load_seconds:8.2f} s")
    print(f"  prompt          {result.prompt_tokens_per_second:8.1f} tok/s "
          f"({result.prompt_tokens} tokens)")
    print(f"  first token     {result.first_token_seconds:8.2f} s")
    print(f"  generation      {result.generation_tokens_per_second:8.1f} tok/s "
          f"({result.generated_tokens} tokens)")
    return 0


def _rm(args: argparse.Namespace) -> int:
    settings = load_settings()
    freed = library.remove_local_model(settings, args.name, delete_files=not args.keep_file)
    save_settings(settings)
    extra = f"; deleted its files, {size_text(freed)} freed" if freed else ""
    print(f"Removed '{args.name}'{extra}.")
    return 0
