"""Light and dark themes: one palette per theme, turned into a Qt stylesheet and CSS.

Widgets never hard-code colours; they ask for the active :class:`Palette` (chat HTML needs
its colours as CSS, the code highlighter needs a Pygments style). ``system`` follows the
platform's colour scheme where Qt reports one (Qt 6.5+), else light.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

ThemeName = Literal["light", "dark", "system"]

#: Where stylesheets, icons and HTML templates live in a source checkout.
RESOURCES_DIR = Path(__file__).resolve().parents[2] / "resources"


@dataclass(frozen=True)
class Palette:
    """The colours of one theme."""

    name: str
    window: str
    surface: str          # cards, bubbles
    surface_alt: str      # sidebar, code blocks
    border: str
    text: str
    text_muted: str
    accent: str
    accent_text: str
    user_bubble: str
    error_bg: str
    error_text: str
    ok: str
    code_bg: str
    pygments_style: str


LIGHT = Palette(
    name="light", window="#f7f7f8", surface="#ffffff", surface_alt="#eeeff1", border="#d9dbe0",
    text="#1f2328", text_muted="#6b7280", accent="#2563eb", accent_text="#ffffff",
    user_bubble="#e8f0fe", error_bg="#fdecec", error_text="#9b1c1c", ok="#15803d",
    code_bg="#f6f8fa", pygments_style="friendly",
)

DARK = Palette(
    name="dark", window="#1e1f22", surface="#2b2d31", surface_alt="#232428", border="#3f4147",
    text="#e6e6e6", text_muted="#9ca3af", accent="#5b8def", accent_text="#ffffff",
    user_bubble="#2f3b52", error_bg="#4a1f1f", error_text="#fca5a5", ok="#4ade80",
    code_bg="#1a1b1e", pygments_style="monokai",
)

_active: Palette = LIGHT


def active() -> Palette:
    """The palette currently applied to the application."""
    return _active


def resolve(theme: ThemeName) -> Palette:
    """The palette for a theme setting; ``system`` asks the platform."""
    if theme == "dark":
        return DARK
    if theme == "light":
        return LIGHT
    app = QGuiApplication.instance()
    if app is not None:
        scheme = QGuiApplication.styleHints().colorScheme()
        if scheme == Qt.ColorScheme.Dark:
            return DARK
    return LIGHT


#: A white tick on the accent colour: check boxes read clearly in both themes (the dark
#: theme's native ones were nearly invisible on the Compare model list).
_CHECK_MARK = (RESOURCES_DIR / "icons" / "check.svg").as_posix()


def stylesheet(p: Palette) -> str:
    """The application stylesheet for ``p`` (object names select the main regions)."""
    return f"""
QMainWindow, QDialog {{ background: {p.window}; color: {p.text}; }}
QWidget {{ color: {p.text}; }}
QToolTip {{ background: {p.surface}; color: {p.text}; border: 1px solid {p.border}; }}
#Sidebar {{ background: {p.surface_alt}; border-right: 1px solid {p.border}; }}
#Sidebar QListWidget {{ background: transparent; border: none; }}
#Sidebar QListWidget::item {{ padding: 6px 8px; border-radius: 6px; }}
#Sidebar QListWidget::item:selected {{ background: {p.accent}; color: {p.accent_text}; }}
#ChatHeader {{ background: {p.surface}; border-bottom: 1px solid {p.border}; }}
#ChatScroll, #ChatContent {{ background: {p.window}; border: none; }}
#UserBubble {{ background: {p.user_bubble}; border-radius: 10px; }}
#UserBubble[editing="true"] {{ border: 2px dashed {p.accent}; }}
QCheckBox::indicator, QListView::indicator {{ width: 15px; height: 15px; border-radius: 3px;
    border: 1px solid {p.text_muted}; background: {p.surface}; }}
QCheckBox::indicator:checked, QListView::indicator:checked {{ background: {p.accent};
    border-color: {p.accent}; image: url({_CHECK_MARK}); }}
QCheckBox::indicator:disabled, QListView::indicator:disabled {{ border-color: {p.border}; }}
#AssistantTurn {{ background: transparent; }}
#ToolCard {{ background: {p.surface}; border: 1px solid {p.border}; border-radius: 8px; }}
#ToolCardHeader {{ text-align: left; border: none; padding: 4px 6px; font-weight: 600; }}
#CodeBlock {{ background: {p.code_bg}; border: 1px solid {p.border}; border-radius: 6px; }}
#CodeBlockHeader {{ color: {p.text_muted}; }}
#ErrorCard {{ background: {p.error_bg}; color: {p.error_text}; border-radius: 8px; }}
#ErrorCard QLabel, #ErrorCard QTextBrowser {{ color: {p.error_text}; }}
#InterruptNote {{ background: {p.surface}; border-left: 3px solid {p.accent};
                 border-radius: 4px; }}
#Footer, #Muted, #ThinkingIndicator {{ color: {p.text_muted}; }}
#Divider {{ color: {p.text_muted}; }}
#Warning {{ color: {p.error_text}; background: {p.error_bg}; border-radius: 4px;
           padding: 1px 6px; }}
#Composer {{ background: {p.surface}; border-top: 1px solid {p.border}; }}
#ComposerInput {{ background: {p.window}; border: 1px solid {p.border}; border-radius: 8px;
                 padding: 6px; }}
#EmptyState QLabel#EmptyTitle {{ font-size: 20pt; font-weight: 600; }}
#StatusBanner {{ background: {p.surface_alt}; border-bottom: 1px solid {p.border}; }}
QTextBrowser {{ background: transparent; border: none; }}
QPushButton#Primary {{ background: {p.accent}; color: {p.accent_text}; border: none;
                      border-radius: 6px; padding: 6px 14px; }}
QPushButton#Primary:disabled {{ background: {p.border}; }}
QPushButton#Danger {{ background: {p.error_bg}; color: {p.error_text}; border: none;
                     border-radius: 6px; padding: 6px 14px; }}
QLineEdit {{ background: {p.surface};
    border: 1px solid {p.border}; border-radius: 4px; padding: 2px 4px; }}
"""


def document_css(p: Palette) -> str:
    """CSS for Qt rich-text documents (chat messages); Qt supports a CSS subset."""
    return (
        f"body {{ color: {p.text}; }}"
        f"a {{ color: {p.accent}; }}"
        f"code {{ background-color: {p.code_bg}; font-family: monospace; }}"
        f"pre {{ background-color: {p.code_bg}; font-family: monospace; }}"
        f"blockquote {{ color: {p.text_muted}; margin-left: 12px; }}"
        f"th {{ background-color: {p.surface_alt}; }}"
        f"td, th {{ padding: 3px 6px; }}"
        f"table {{ border-collapse: collapse; }}"
    )


def apply(app: QApplication, theme: ThemeName) -> Palette:
    """Apply ``theme`` to the whole application and return its palette."""
    global _active
    _active = resolve(theme)
    qpal = app.palette()
    qpal.setColor(QPalette.ColorRole.Window, QColor(_active.window))
    qpal.setColor(QPalette.ColorRole.Base, QColor(_active.surface))
    qpal.setColor(QPalette.ColorRole.AlternateBase, QColor(_active.surface_alt))
    qpal.setColor(QPalette.ColorRole.Text, QColor(_active.text))
    qpal.setColor(QPalette.ColorRole.WindowText, QColor(_active.text))
    qpal.setColor(QPalette.ColorRole.ButtonText, QColor(_active.text))
    qpal.setColor(QPalette.ColorRole.Button, QColor(_active.surface))
    qpal.setColor(QPalette.ColorRole.Highlight, QColor(_active.accent))
    qpal.setColor(QPalette.ColorRole.HighlightedText, QColor(_active.accent_text))
    qpal.setColor(QPalette.ColorRole.PlaceholderText, QColor(_active.text_muted))
    qpal.setColor(QPalette.ColorRole.Link, QColor(_active.accent))
    app.setPalette(qpal)
    app.setStyleSheet(stylesheet(_active))
    return _active


def icon_path(name: str) -> Path:
    """The SVG icon called ``name`` in ``resources/icons``."""
    return RESOURCES_DIR / "icons" / f"{name}.svg"
