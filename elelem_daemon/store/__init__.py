"""The store: sessions kept on disk. `store` lists, loads and deletes them, `records` is
the file format (written and read), `recorder` keeps a session on disk as it goes, and
`listing` joins the stored sessions with those a face has open."""

from .records import Stored
from .store import Store, sessions_dir

__all__ = ["Store", "Stored", "sessions_dir"]
