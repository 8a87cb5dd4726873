"""Local documents: collections of the user's files, indexed (words and meaning) and
searched by the assistant, which cites what it used. Entry: ``DocumentLibrary``."""

from desktop_app.core.documents.convert import SUPPORTED_SUFFIXES, ConversionError
from desktop_app.core.documents.indexer import SyncCancelledError, SyncProgress, SyncReport
from desktop_app.core.documents.library import CollectionError, DocumentLibrary, FileStatus
from desktop_app.core.documents.search import Hit

__all__ = ["SUPPORTED_SUFFIXES", "CollectionError", "ConversionError", "DocumentLibrary",
           "FileStatus", "Hit", "SyncCancelledError", "SyncProgress", "SyncReport"]
