"""session.files: the file tools read and write through it; the default is the disk."""

from __future__ import annotations

from pathlib import Path

from elelem_daemon.plugins import core_registry
from elelem_daemon.session import start


class MemoryFiles:
    """A stand-in editor: serves texts from memory and records writes."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.writes: list[tuple[Path, str]] = []

    async def read_text(self, path: Path, errors: str = "strict") -> str:
        if path not in self.texts:
            raise FileNotFoundError(str(path))
        return self.texts[path]

    async def write_text(self, path: Path, text: str) -> int:
        self.writes.append((path, text))
        self.texts[path] = text
        return len(text.encode())


def session(tmp_path: Path):
    return start(core_registry(entry_points=False), cwd=tmp_path, plugin_files=False)


async def test_the_default_is_the_local_disk(tmp_path: Path) -> None:
    s = session(tmp_path)
    written = await s.toolbox.run("write", {"path": "a/b.txt", "content": "héllo"})
    assert (written.payload["bytes"], written.payload["path"]) == (6, "a/b.txt")
    assert (tmp_path / "a/b.txt").read_text() == "héllo"
    edited = await s.toolbox.run("edit", {"path": "a/b.txt", "old": "é", "new": "e"})
    assert edited.ok and (tmp_path / "a/b.txt").read_text() == "hello"
    read = await s.toolbox.run("read", {"path": "a/b.txt"})
    assert read.payload == {"content": "hello", "path": "a/b.txt"}
    missing = await s.toolbox.run("read", {"path": "nope.txt"})
    assert missing.payload == {"error": "not found", "path": "nope.txt"}


async def test_read_write_and_edit_go_through_session_files(tmp_path: Path) -> None:
    s = session(tmp_path)
    target = tmp_path / "buffer.py"
    s.files = MemoryFiles({target: "x = 1  # unsaved\n"})
    read = await s.toolbox.run("read", {"path": "buffer.py"})
    assert read.payload["content"] == "x = 1  # unsaved\n"
    assert not target.exists()  # never touched the disk
    await s.toolbox.run("edit", {"path": "buffer.py", "old": "1", "new": "2"})
    await s.toolbox.run("write", {"path": "new.py", "content": "y"})
    assert s.files.writes == [(target, "x = 2  # unsaved\n"), (tmp_path / "new.py", "y")]
    assert not (tmp_path / "new.py").exists()
    missing = await s.toolbox.run("edit", {"path": "gone.py", "old": "a", "new": "b"})
    assert missing.payload == {"error": "not found", "path": "gone.py"}
