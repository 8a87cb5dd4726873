"""Render resources/icons/app.svg to PNGs at the usual hicolor sizes (16…512) with Qt's own
SVG renderer, into OUT/<n>x<n>/apps/desktop-app.png, for the Linux package."""

from __future__ import annotations

import sys
from pathlib import Path

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def main(out: Path) -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(["render-icons"])
    source = Path(__file__).resolve().parents[1] / "resources" / "icons" / "app.svg"
    renderer = QSvgRenderer(str(source))
    if not renderer.isValid():
        print(f"cannot read {source}", file=sys.stderr)
        return 1
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        target = out / f"{size}x{size}" / "apps" / "desktop-app.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target)):
            return 1
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
