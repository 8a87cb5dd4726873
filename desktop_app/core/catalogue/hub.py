"""GGUF models on the Hugging Face Hub: search, a repo's quantisations, and downloads that
resume, can be paused or cancelled, and are verified before they count as a model.

``huggingface_hub`` does the talking (it honours ``HF_ENDPOINT``, ``HF_HUB_OFFLINE``,
proxies and tokens); the transfer itself is ours because its ``hf_hub_download`` can be
neither paused nor cancelled from another thread and reports progress only to tqdm.

A download goes to ``<file>.part`` and becomes ``<file>`` only once its size and SHA-256
match the hub's LFS record, so a half-downloaded or corrupted file never shows up as a
model. A dropped connection resumes with an HTTP range request where it stopped.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.errors import DesktopAppError

#: Bytes per read; progress is reported at most this often.
_CHUNK = 1024 * 1024
#: Reconnections after a dropped connection before the download gives up (and stays
#: resumable: the .part file is kept).
MAX_RESUMES = 5
#: Free disk space to keep beyond the download itself.
DISK_MARGIN = 256 * 1024 * 1024
_SPLIT = re.compile(r"^(?P<stem>.*)-(?P<n>\d{5})-of-(?P<total>\d{5})\.gguf$")
_QUANT = re.compile(r"(?i)(?:^|[-_.])((?:I?Q\d(?:_[A-Z0-9]+)*)|F16|BF16|F32)(?=[-_.]|$)")


class HubError(DesktopAppError):
    """Searching or downloading failed; the message says what to do (shown as such by the
    CLI and the window, never as a traceback)."""


class DownloadStopped(HubError):  # a stop the user asked for, not a failure
    """The user paused or cancelled the download."""

    def __init__(self, message: str, *, cancelled: bool) -> None:
        super().__init__(message)
        self.cancelled = cancelled


@dataclass(frozen=True)
class RepoSummary:
    repo: str
    downloads: int
    likes: int


@dataclass(frozen=True)
class RemoteModel:
    """One quantisation of a repo: a single GGUF, or all parts of a split one."""

    repo: str
    files: list[str]
    sizes: list[int]
    sha256: list[str | None]
    quantisation: str

    @property
    def size(self) -> int:
        return sum(self.sizes)

    @property
    def filename(self) -> str:
        return self.files[0]


@dataclass
class DownloadProgress:
    done: int
    total: int
    started: float = field(default_factory=time.monotonic)
    resumed_from: int = 0

    @property
    def speed(self) -> float:
        """Bytes per second over this session's transfer (not counting resumed bytes)."""
        elapsed = time.monotonic() - self.started
        return (self.done - self.resumed_from) / elapsed if elapsed > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        return (self.total - self.done) / self.speed if self.speed > 0 else None


@dataclass
class DownloadControl:
    """Set from any thread: ``pause`` keeps the partial file, ``cancel`` deletes it."""

    pause: threading.Event = field(default_factory=threading.Event)
    cancel: threading.Event = field(default_factory=threading.Event)


def _no_telemetry() -> None:
    """huggingface_hub adds usage details to its User-Agent and, for that, fetches a list
    from the hub once a day (``/api/agent-harnesses``). Nothing phones home: the app only
    talks to the hub to do what the user asked."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    from huggingface_hub import constants

    constants.HF_HUB_DISABLE_TELEMETRY = True


def endpoint() -> str:
    """The hub's address: ``HF_ENDPOINT`` as it is now (huggingface_hub reads it once, at
    import), else the library's default."""
    _no_telemetry()
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


_recorded_sessions = False


def _record_hub_traffic() -> None:
    """huggingface_hub's HTTP session goes through the egress point (lock and ledger)."""
    global _recorded_sessions
    if _recorded_sessions:
        return
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import hf_request_event_hook  # its default client's hook

    from desktop_app.core import egress

    set_client_factory(lambda: egress.client(
        "model hub request", factory=_fail_fast_client,
        event_hooks={"request": [hf_request_event_hook]}, follow_redirects=True,
        timeout=_HUB_TIMEOUT))
    _recorded_sessions = True


class HubUnreachable(Exception):
    """No connection to the hub could be made (not an httpx error: not retried)."""


def _fail_fast_client(transport: Any, **options: Any) -> Any:
    """huggingface_hub retries a failed connection five times with back-off (24 s before
    a search said it could not connect); one failed connection is enough to tell a person
    to check the network, so it is raised as an error the library does not retry."""
    import httpx2

    class FailFast(httpx2.BaseTransport):
        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            try:
                response: httpx2.Response = transport.handle_request(request)
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
                raise HubUnreachable(str(exc) or type(exc).__name__) from None
            return response

        def close(self) -> None:
            transport.close()

    return httpx2.Client(transport=FailFast(), **options)


#: Metadata calls only (downloads have their own client): a hub that accepts a connection
#: and then says nothing is not waited on for ever.
_HUB_TIMEOUT = 60.0


def _api() -> Any:
    from huggingface_hub import HfApi

    _record_hub_traffic()
    return HfApi(endpoint=endpoint())


def _hub_call(what: str, call: Callable[[], Any]) -> Any:
    from huggingface_hub.errors import OfflineModeIsEnabled, RepositoryNotFoundError

    if _offline():
        raise HubError(f"Cannot {what}: offline mode is on (HF_HUB_OFFLINE is set).")
    from desktop_app.core import egress

    egress.guard(endpoint(), f"request to {what}")
    try:
        with egress.purpose(what):
            return call()
    except OfflineModeIsEnabled:
        raise HubError(f"Cannot {what}: offline mode is on (HF_HUB_OFFLINE).") from None
    except RepositoryNotFoundError:
        raise HubError(f"Cannot {what}: no such model repository on the hub.") from None
    except Exception as exc:  # noqa: BLE001 - network, HTTP, JSON: all the same to a user
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise HubError(f"Cannot {what}: {first_line or type(exc).__name__}. Check the "
                       "network connection, or set HF_ENDPOINT to a reachable hub.") from None


def search_models(query: str, limit: int = 20) -> list[RepoSummary]:
    """GGUF repos matching ``query``, most downloaded first."""
    models = _hub_call("search the hub", lambda: list(_api().list_models(
        search=query, filter="gguf", sort="downloads", limit=limit)))
    return [RepoSummary(m.id, int(m.downloads or 0), int(m.likes or 0)) for m in models]


def quantisation_of(filename: str) -> str:
    name = Path(filename).name
    split = _SPLIT.match(name)
    stem = split.group("stem") if split else name.removesuffix(".gguf")
    found = _QUANT.findall(stem)
    return found[-1].upper() if found else "?"


def list_quantisations(repo: str) -> list[RemoteModel]:
    """The GGUF models in ``repo`` (split files grouped), smallest first."""
    info = _hub_call(f"list the files of {repo}",
                     lambda: _api().model_info(repo, files_metadata=True))
    groups: dict[str, list[Any]] = {}
    for sibling in info.siblings or []:
        name = sibling.rfilename
        if not name.lower().endswith(".gguf") or Path(name).name.startswith("mmproj"):
            continue
        split = _SPLIT.match(name)
        groups.setdefault(split.group("stem") if split else name, []).append(sibling)
    out = []
    for siblings in groups.values():
        siblings.sort(key=lambda s: s.rfilename)
        out.append(RemoteModel(
            repo=repo, files=[s.rfilename for s in siblings],
            sizes=[int(s.size or (s.lfs.size if s.lfs else 0) or 0) for s in siblings],
            sha256=[s.lfs.sha256 if s.lfs else None for s in siblings],
            quantisation=quantisation_of(siblings[0].rfilename)))
    return sorted(out, key=lambda model: model.size)


def download_model(model: RemoteModel, folder: Path, *,
                   on_progress: Callable[[DownloadProgress], None] | None = None,
                   control: DownloadControl | None = None) -> Path:
    """Download every file of ``model`` into ``folder``; returns the first file's path.

    Resumes a ``.part`` file left by an earlier attempt; raises ``DownloadStopped`` when
    paused or cancelled through ``control`` and ``HubError`` when it fails.
    """
    control = control or DownloadControl()
    if _offline():
        raise HubError("Cannot download: offline mode is on (HF_HUB_OFFLINE is set).")
    unknown = [name for name, size in zip(model.files, model.sizes, strict=True) if size <= 0]
    if unknown:
        # Without a size nothing bounds what the server sends and the disk space cannot be
        # checked; the hub always gives one for model files.
        raise HubError(f"The hub does not say how large {', '.join(unknown)} is, so it is not "
                       "downloaded.", hint="Choose a file the hub lists with its size.")
    folder.mkdir(parents=True, exist_ok=True)
    targets = [folder / Path(name).name for name in model.files]
    missing = [(i, t) for i, t in enumerate(targets) if not t.exists()]
    have = sum(_part(t).stat().st_size for _, t in missing if _part(t).exists())
    needed = sum(model.sizes[i] for i, _ in missing) - have
    free = shutil.disk_usage(folder).free
    if needed + DISK_MARGIN > free:
        raise HubError(f"Not enough disk space in {folder}: the download needs "
                       f"{needed / 2**30:.1f} GiB and {free / 2**30:.1f} GiB are free.")
    progress = DownloadProgress(done=sum(model.sizes) - needed, total=sum(model.sizes))
    progress.resumed_from = progress.done
    for index, target in missing:
        _download_file(model, index, target, progress, on_progress, control)
    return targets[0]


def _part(target: Path) -> Path:
    return target.with_name(target.name + ".part")


class _PartFile:
    """A ``.part`` file and the running SHA-256 of what it holds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.digest = hashlib.sha256()
        if path.exists():
            with path.open("rb") as handle:  # resumed bytes count towards the hash
                for block in iter(lambda: handle.read(_CHUNK), b""):
                    self.digest.update(block)

    @property
    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def restart(self) -> None:
        self.path.write_bytes(b"")
        self.digest = hashlib.sha256()


def _download_file(model: RemoteModel, index: int, target: Path, progress: DownloadProgress,
                   on_progress: Callable[[DownloadProgress], None] | None,
                   control: DownloadControl) -> None:
    from huggingface_hub import hf_hub_url

    part = _PartFile(_part(target))
    url = hf_hub_url(model.repo, model.files[index], endpoint=endpoint())
    expected_size, expected_hash = model.sizes[index], model.sha256[index]
    failures = 0
    while not (expected_size and part.size >= expected_size):
        try:
            _transfer(url, part, progress, on_progress, control, limit=expected_size)
            break
        except DownloadStopped:
            if control.cancel.is_set():
                part.path.unlink(missing_ok=True)
            raise
        except HubError:
            raise
        except Exception as exc:  # noqa: BLE001 - a dropped connection: resume where it stopped
            failures += 1
            if failures > MAX_RESUMES:
                raise HubError(f"The download of {target.name} kept failing ({exc}); it is "
                               "kept and resumes when you start it again.") from None
            time.sleep(min(0.2 * failures, 2.0))
    _verify(part, target, expected_size, expected_hash)


def _transfer(url: str, part: _PartFile, progress: DownloadProgress,
              on_progress: Callable[[DownloadProgress], None] | None,
              control: DownloadControl, *, limit: int) -> None:
    """Append the rest of ``url`` to ``part``, never more than ``limit`` bytes in all."""
    from huggingface_hub.utils import build_hf_headers, get_session

    from desktop_app.core import egress

    egress.guard(url, "download")
    _record_hub_traffic()
    have = part.size
    headers = build_hf_headers()
    headers["Accept-Encoding"] = "identity"
    if have:
        headers["Range"] = f"bytes={have}-"
    with egress.purpose("download"), get_session().stream(
            "GET", url, headers=headers, follow_redirects=True, timeout=30) as response:
        if response.status_code == 416:
            return  # nothing left to send
        if response.status_code >= 400:
            raise HubError(f"The hub answered {response.status_code} for {url}.")
        if have and response.status_code != 206:
            # The server ignored the range: start over so the file is not doubled.
            part.restart()
            progress.done -= have
        with part.path.open("ab") as handle:
            for block in response.iter_bytes(_CHUNK):
                if control.cancel.is_set() or control.pause.is_set():
                    cancelled = control.cancel.is_set()
                    raise DownloadStopped("Download cancelled." if cancelled
                                          else "Download paused.", cancelled=cancelled)
                if handle.tell() + len(block) > limit:
                    handle.close()
                    part.path.unlink(missing_ok=True)
                    raise HubError(f"The server sent more than the {limit:,} bytes the hub "
                                   f"declared for {url.rsplit('/', 1)[-1]}; the download was "
                                   "stopped and removed.", hint="Try again later or choose "
                                   "another file; a server that does this is not trustworthy.")
                handle.write(block)
                part.digest.update(block)
                progress.done += len(block)
                if on_progress is not None:
                    on_progress(progress)


def _verify(part: _PartFile, target: Path, size: int, sha256: str | None) -> None:
    actual = part.size
    if size and actual != size:
        part.path.unlink(missing_ok=True)
        raise HubError(f"{target.name} arrived with {actual:,} bytes instead of {size:,}; "
                       "the partial file was removed, start the download again.")
    if sha256 and part.digest.hexdigest() != sha256.lower():
        part.path.unlink(missing_ok=True)
        raise HubError(f"{target.name} is corrupted (its SHA-256 does not match the hub's); "
                       "it was removed, start the download again.")
    part.path.replace(target)
