"""The shape every list page of the settings dialog shares: a list of items with Add and
Remove on the left, a form for the selected item on the right, and edits copied back into
the item when the selection moves or the dialog saves (``commit``).

Subclasses fill ``self.form`` and say how an item is made, shown and read back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from pydantic import BaseModel
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

Item = TypeVar("Item", bound=BaseModel)


class ListEditor(QWidget, Generic[Item]):
    """Items (pydantic models, copied) with a form for the selected one."""

    add_label = "Add"

    def __init__(self, items: Sequence[Item], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.items: list[Item] = [item.model_copy(deep=True) for item in items]
        self._row = -1
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._select)
        self.add_button = QPushButton(self.add_label)
        self.add_button.clicked.connect(self.add_new)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_current)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        left.addLayout(buttons)
        self.form_widget = QWidget()
        self.form = QFormLayout(self.form_widget)
        #: The list and the form side by side; the subclass puts it in its layout.
        self.body = QHBoxLayout()
        self.body.addLayout(left, 1)
        self.body.addWidget(self.form_widget, 2)

    # --- what a subclass says ------------------------------------------------------------------
    def new_item(self) -> Item | None:
        """A fresh item for "Add" (None: Add does something else, e.g. a file dialog)."""
        raise NotImplementedError

    def show_item(self, item: Item) -> None:
        raise NotImplementedError

    def read_form(self, item: Item) -> Item:
        """``item`` updated from the form."""
        raise NotImplementedError

    def label(self, item: Item) -> str:
        return str(getattr(item, "name", "") or "(unnamed)")

    def show_form(self, shown: bool) -> None:
        self.form_widget.setEnabled(shown)

    def removed(self, row: int) -> None:
        """Item ``row`` was removed (bookkeeping keyed by row shifts here)."""

    # --- shared behaviour -----------------------------------------------------------------------
    def populate(self) -> None:
        """Fill the list; call at the end of the subclass's ``__init__``."""
        for item in self.items:
            self.list.addItem(self.label(item))
        self.show_form(False)
        if self.items:
            self.list.setCurrentRow(0)

    def add_new(self) -> None:
        item = self.new_item()
        if item is not None:
            self.add_item(item)

    def add_item(self, item: Item) -> None:
        self.commit()
        self.items.append(item)
        self.list.addItem(self.label(item))
        self.list.setCurrentRow(len(self.items) - 1)

    def unique_name(self, base: str) -> str:
        names = {getattr(item, "name", None) for item in self.items}
        return next(f"{base}-{i}" for i in range(1, 10_000) if f"{base}-{i}" not in names)

    def remove_current(self) -> None:
        row = self.list.currentRow()
        if row < 0:
            return
        self._row = -1
        del self.items[row]
        self.removed(row)
        # Quietly: while the row goes, Qt reports the next row by its old index (one past
        # the end of ``items`` when the first of two is removed).
        self.list.blockSignals(True)
        self.list.takeItem(row)
        self.list.blockSignals(False)
        self._select(self.list.currentRow())

    def _select(self, row: int) -> None:
        self.commit()
        self._row = row
        self.show_form(row >= 0)
        if row >= 0:
            self.show_item(self.items[row])

    def commit(self) -> None:
        """Copy the form into the selected item."""
        row = self._row
        if not 0 <= row < len(self.items):
            return
        self.items[row] = self.read_form(self.items[row])
        self.list.item(row).setText(self.label(self.items[row]))
