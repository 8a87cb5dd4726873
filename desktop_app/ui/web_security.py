"""The sandbox for untrusted artifacts shown in the web view.

Artifacts come from tools driven by a language model, so they are treated like a page from
a stranger. Four independent layers keep them inside the view:

1. a dedicated off-the-record ``QWebEngineProfile`` (no disk cache, cookies or storage shared
   with anything) whose ``QWebEngineUrlRequestInterceptor`` blocks every request that is not
   the inline document itself (``data:``/``about:``/``blob:``) — remote, loopback, file, all;
2. a strict Content-Security-Policy injected as the first element of the document
   (``default-src 'none'``; inline styles, scripts and ``data:`` images only);
3. page settings: no file or remote access from local content, no clipboard, no popups,
   no plugins, no screen capture, no fullscreen, no drag-and-drop navigation;
4. an ``ArtifactPage`` that refuses every navigation except loading the artifact itself,
   refuses new windows, and denies every permission request (camera, location...).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QCoreApplication, QUrl
from PySide6.QtWebEngineCore import (
    QWebEnginePage,
    QWebEngineProfile,
    QWebEngineSettings,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
)

#: Schemes the artifact document itself is made of; everything else is blocked.
ALLOWED_SCHEMES = frozenset({"data", "about", "blob"})

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'none'; "
       "frame-src 'none'; child-src 'none'; worker-src 'none'; object-src 'none'; "
       "form-action 'none'; base-uri 'none'; manifest-src 'none'")

_HEAD_RE = re.compile(r"<head[^>]*>", re.IGNORECASE)
_HTML_RE = re.compile(r"<html[^>]*>", re.IGNORECASE)


def with_csp(document: str) -> str:
    """``document`` with the CSP meta tag as the first thing in ``<head>``.

    The tag must precede any element that could load something, so it is put right after
    ``<head>`` (or ``<html>``), or in front of everything when the document has neither.
    """
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    for pattern in (_HEAD_RE, _HTML_RE):
        match = pattern.search(document)
        if match:
            insert = meta if pattern is _HEAD_RE else f"<head>{meta}</head>"
            return document[:match.end()] + insert + document[match.end():]
    return f"<!DOCTYPE html><html><head>{meta}<meta charset='utf-8'></head><body>{document}</body></html>"


class BlockingInterceptor(QWebEngineUrlRequestInterceptor):
    """Blocks every request whose scheme is not one the inline document is made of."""

    def __init__(self, parent: object | None = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        #: URLs that were blocked (tests check them; the pane shows a count).
        self.blocked: list[str] = []

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        url = info.requestUrl()
        if url.scheme().lower() not in ALLOWED_SCHEMES:
            self.blocked.append(url.toString())
            info.block(True)


_sandbox: tuple[QWebEngineProfile, BlockingInterceptor] | None = None


def sandbox_profile() -> tuple[QWebEngineProfile, BlockingInterceptor]:
    """The one artifact profile of this process (created on first use).

    A profile must outlive every page using it (Chromium crashes otherwise), so it is owned
    by the application object, not by a pane that could be destroyed before its page.
    """
    global _sandbox
    if _sandbox is None:
        _sandbox = make_profile(QCoreApplication.instance())
    return _sandbox


def make_profile(parent: object | None = None) -> tuple[QWebEngineProfile, BlockingInterceptor]:
    """A fresh off-the-record profile with the blocking interceptor installed."""
    profile = QWebEngineProfile(parent)  # no storage name → off the record
    profile.setHttpCacheType(QWebEngineProfile.HttpCacheType.NoCache)
    profile.setPersistentCookiesPolicy(QWebEngineProfile.PersistentCookiesPolicy.NoPersistentCookies)
    profile.setSpellCheckEnabled(False)
    interceptor = BlockingInterceptor(profile)
    profile.setUrlRequestInterceptor(interceptor)
    harden_settings(profile.settings())
    return profile, interceptor


def harden_settings(settings: QWebEngineSettings) -> None:
    """Turn off everything that lets a page reach beyond itself."""
    attr = QWebEngineSettings.WebAttribute
    off = (attr.LocalContentCanAccessFileUrls, attr.LocalContentCanAccessRemoteUrls,
           attr.JavascriptCanOpenWindows, attr.JavascriptCanAccessClipboard,
           attr.JavascriptCanPaste, attr.AllowRunningInsecureContent,
           attr.AllowGeolocationOnInsecureOrigins, attr.PluginsEnabled,
           attr.ScreenCaptureEnabled, attr.FullScreenSupportEnabled,
           attr.NavigateOnDropEnabled, attr.LocalStorageEnabled, attr.HyperlinkAuditingEnabled,
           attr.DnsPrefetchEnabled, attr.PdfViewerEnabled, attr.WebGLEnabled,
           attr.AllowWindowActivationFromJavaScript, attr.AutoLoadIconsForPage,
           attr.TouchIconsEnabled, attr.ErrorPageEnabled)
    for attribute in off:
        settings.setAttribute(attribute, False)
    settings.setAttribute(attr.JavascriptEnabled, True)  # charts and tables may need it
    settings.setAttribute(attr.WebRTCPublicInterfacesOnly, True)


class ArtifactPage(QWebEnginePage):
    """A page that only ever shows the artifact it was given."""

    def __init__(self, profile: QWebEngineProfile, parent: object | None = None) -> None:
        super().__init__(profile, parent)  # type: ignore[arg-type]
        self._allow_load = False
        #: Navigations the page attempted and was refused (links, redirects, form posts).
        self.refused: list[str] = []
        self.permissionRequested.connect(lambda permission: permission.deny())

    def show_document(self, document: str) -> None:
        """Load ``document`` (already wrapped with the CSP) as the page."""
        self._allow_load = True
        self.setHtml(document, QUrl("about:blank"))

    def acceptNavigationRequest(self, url: QUrl, nav_type: QWebEnginePage.NavigationType,
                                is_main_frame: bool) -> bool:
        if self._allow_load and is_main_frame and url.scheme() in ("data", "about"):
            self._allow_load = False
            return True
        self.refused.append(url.toString())
        return False

    def createWindow(self, _type: QWebEnginePage.WebWindowType) -> None:
        return None  # window.open and target=_blank open nothing

    def javaScriptConsoleMessage(self, level, message, line, source) -> None:
        pass  # artifact scripts' console output is not ours to log
