"""A real HTTP server on loopback that answers the hub endpoints ``huggingface_hub``
calls, and small GGUF files written byte by byte (the format, not a model)."""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def write_tiny_gguf(path: Path, *, architecture: str = "llama", layers: int = 2,
                    heads: int = 4, kv_heads: int = 2, embedding: int = 64,
                    context: int = 4096, extra: dict[str, str | int] | None = None,
                    data_bytes: int = 4096, vocabulary: int = 300) -> Path:
    """A GGUF v3 file with real header fields, a vocabulary array and one tensor."""
    kvs = [
        (_string("general.architecture"), 8, _string(architecture)),
        (_string("general.name"), 8, _string(path.stem)),
        (_string("general.file_type"), 4, struct.pack("<I", 15)),
        (_string(f"{architecture}.block_count"), 4, struct.pack("<I", layers)),
        (_string(f"{architecture}.context_length"), 4, struct.pack("<I", context)),
        (_string(f"{architecture}.embedding_length"), 4, struct.pack("<I", embedding)),
        (_string(f"{architecture}.attention.head_count"), 4, struct.pack("<I", heads)),
        (_string(f"{architecture}.attention.head_count_kv"), 4, struct.pack("<I", kv_heads)),
        (_string("tokenizer.ggml.tokens"), 9,
         struct.pack("<IQ", 8, vocabulary) + b"".join(_string(f"t{i}") for i in range(vocabulary))),
        (_string("tokenizer.chat_template"), 8, _string("{{ messages }}")),
    ]
    for key, value in (extra or {}).items():
        if isinstance(value, int):  # as gguf-split writes split.no / split.count: uint16
            kvs.append((_string(key), 2, struct.pack("<H", value)))
        else:
            kvs.append((_string(key), 8, _string(value)))
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs))
    header += b"".join(k + struct.pack("<I", t) + v for k, t, v in kvs)
    header += _string("token_embd.weight") + struct.pack("<I", 2) + struct.pack("<QQ", 64, 32)
    header += struct.pack("<IQ", 0, 0)
    header += b"\0" * (-len(header) % 32)
    path.write_bytes(header + bytes(range(256)) * (data_bytes // 256))
    return path


@dataclass
class HubFile:
    path: Path
    #: The hash the hub announces (default: the file's own).
    sha256: str | None = None
    #: The size the hub announces (default: the file's own; 0: none, and no LFS record).
    announced_size: int | None = None

    def announced_hash(self) -> str:
        if self.sha256 is None:
            self.sha256 = hashlib.sha256(self.path.read_bytes()).hexdigest()
        return self.sha256


@dataclass
class FakeHub:
    """Repos by id, each a dict of file name → HubFile; plus fault injection."""

    repos: dict[str, dict[str, HubFile]] = field(default_factory=dict)
    #: Close the connection after this many bytes of the next GET of a file (once each).
    drop_after: list[int] = field(default_factory=list)
    #: Ignore Range headers (answer 200 with the whole file).
    ignore_ranges: bool = False
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    url: str = ""


def _sibling(name: str, entry: HubFile) -> dict[str, object]:
    size = entry.path.stat().st_size if entry.announced_size is None else entry.announced_size
    if not size:
        return {"rfilename": name}
    return {"rfilename": name, "size": size,
            "lfs": {"size": size, "sha256": entry.announced_hash(), "pointerSize": 134}}


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _json(self, data: object, status: int = 200, code: str | None = None) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            if code:
                self.send_header("X-Error-Code", code)  # as the real hub names its errors
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_HEAD(self) -> None:
            self._file(head=True)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            hub.requests.append(("GET", url.path, self.headers.get("Range")))
            if url.path == "/api/models":
                query = parse_qs(url.query).get("search", [""])[0].lower()
                self._json([{"id": repo, "downloads": 1000 - i, "likes": i, "tags": ["gguf"]}
                            for i, repo in enumerate(sorted(hub.repos)) if query in repo.lower()])
            elif url.path.startswith("/api/models/"):
                repo = unquote(url.path[len("/api/models/"):])
                files = hub.repos.get(repo)
                if files is None:
                    self._json({"error": "Repository not found"}, 404, "RepoNotFound")
                    return
                self._json({"id": repo, "sha": "0" * 40, "siblings": [
                    _sibling(name, f) for name, f in sorted(files.items())]})
            else:
                self._file(head=False)

        def _file(self, head: bool) -> None:
            parts = unquote(urlparse(self.path).path).strip("/").split("/")
            if len(parts) < 5 or parts[2] != "resolve":
                self._json({"error": "not found"}, 404)
                return
            repo, name = "/".join(parts[:2]), "/".join(parts[4:])
            entry = hub.repos.get(repo, {}).get(name)
            if entry is None:
                self._json({"error": "Entry not found"}, 404, "EntryNotFound")
                return
            data = entry.path.read_bytes()
            start = 0
            ranged = self.headers.get("Range")
            if ranged and not hub.ignore_ranges:
                start = int(ranged.removeprefix("bytes=").split("-")[0])
                if start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            body = data[start:]
            self.send_response(206 if start else 200)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", f'"{entry.announced_hash()}"')
            self.send_header("X-Repo-Commit", "0" * 40)
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            if head:
                return
            if hub.drop_after:
                cut = hub.drop_after.pop(0)
                self.wfile.write(body[:cut])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.wfile.write(body)

    return Handler


def serve_hub(hub: FakeHub, host: str = "127.0.0.1") -> Iterator[FakeHub]:
    server = ThreadingHTTPServer((host, 0), _handler(hub))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    hub.url = f"http://{host}:{server.server_address[1]}"
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
