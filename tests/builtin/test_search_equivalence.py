"""The fast `grep` and `glob` (scan.py, issue 22) answer exactly what the plain walk
answered (tests/support/scan_reference.py, the old scan.py kept as the oracle): the same
lines in the same order, the same caps and notes, on a hostile tree. And neither
follows a link out of the folder or into /proc, opens a FIFO, or reads a skipped folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from elelem_daemon.builtins import search, shell

ORACLE = str(Path(__file__).resolve().parents[1] / "support" / "scan_reference.py")
SECRET = "needle 4242"


@pytest.fixture(params=["find and grep", "no find, no grep"], autouse=True)
def tools(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways of the fast scan: through find and grep (listed.py), and without them
    (its own walk, threads reading ahead)."""
    if request.param == "find and grep":
        assert all(shutil.which(tool) for tool in ("find", "grep", "xargs"))
    else:
        monkeypatch.setenv("PATH", "/nonexistent")


def scan(script: str, verb: str, root: Path, **spec: object) -> tuple[int, str]:
    spec = {
        "root": str(root),
        "base": str(root),
        "skip": search.SKIP,
        "limit": 1000,
        "seconds": 30,
        "file_seconds": 2,
        **spec,
    }
    done = subprocess.run(
        [sys.executable, "-I", "-S", script, verb, json.dumps(spec)],
        capture_output=True,
        timeout=60,
    )
    return done.returncode, done.stdout.decode("utf-8", "surrogateescape")


def same(verb: str, root: Path, **spec: object) -> str:
    ours = scan(search.SCAN, verb, root, **spec)
    assert ours == scan(ORACLE, verb, root, **spec), spec
    return ours[1]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    root = tmp_path / "root"
    for folder in ("src/deep/er", "node_modules/pkg", ".git/objects", "b", "a", "__pycache__"):
        (root / folder).mkdir(parents=True)
    (root / "src" / "app.py").write_text(f"def main():\n    return 1  # {SECRET}\n")
    (root / "src" / "deep" / "er" / "z.py").write_text(f"x\r\n{SECRET}\r\n\r\n")
    (root / "src" / "B.PY").write_text(f"{SECRET.upper()}\n")
    (root / "node_modules" / "pkg" / "index.js").write_text(f"{SECRET}\n")
    (root / ".git" / "objects" / "x").write_text(f"{SECRET}\n")
    (root / "__pycache__" / "m.pyc").write_text(f"{SECRET}\n")
    (root / "a" / "later.txt").write_bytes(f"ok\n{SECRET}\n".encode() + b"\xff\n" + SECRET.encode())
    (root / "b" / "bad.txt").write_bytes(f"{SECRET}\n".encode() + b"\xff\xfe\n" + SECRET.encode())
    (root / "nul.bin").write_bytes(f"{SECRET}\0".encode())
    (root / "late-nul.bin").write_bytes(f"{SECRET}\n".encode() + b"x" * 9000 + b"\0")
    big = ("filler line\n" * 9000 + f"{SECRET} at the end\n") * 2  # > 64 KiB
    (root / "big.txt").write_text(big)
    (root / "long.txt").write_text("y" * (1 << 20) + f"{SECRET}\n{SECRET} short\n")
    (root / "no-newline.txt").write_text(f"first\n{SECRET}")
    (root / "unicode.txt").write_text(f"héllo wörld {SECRET} ünïcode\n")
    (root / "link-out.txt").symlink_to(outside / "secret.txt")
    (root / "dir-out").symlink_to(outside)
    (root / "env-link").symlink_to("/proc/self/environ")
    (root / "proc-dir").symlink_to("/proc/self")
    os.mkfifo(root / f"fifo {SECRET}.txt")
    (root / os.fsdecode(b"name-\xff.txt")).write_text(f"{SECRET}\n")
    (root / "empty.txt").write_text("")
    return root


PATTERNS = [
    SECRET,
    "needle 4242$",
    "^needle",
    "(?i)NEEDLE 4242",
    "(?i:needle) 4242",
    "needle|4242",
    "ne+dle 42",
    "n[e]edle",
    "needle\\s4242",
    "4242\\b",
    "(?x) needle \\  4242",
    "wörld",
    "ü",
    "\\ud800",
    "x*",
    "$",
    "needle(?!\\n)",
    "\\Aneedle 4242\\Z",
    "(?:needle) 4242",
    "(needle)+ 4242",
    "n(?i:E)edle",
    "(nee)(dle)",
    "nothing matches this",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_grep_answers_what_the_plain_walk_answered(hostile: Path, pattern: str) -> None:
    out = same("grep", hostile, pattern=pattern)
    assert "outside" not in out and "environ" not in out and "fifo" not in out


def test_grep_never_reads_through_links_or_skipped_folders(hostile: Path) -> None:
    out = same("grep", hostile, pattern=SECRET)
    shown = {line.split(":", 1)[0] for line in out.splitlines()}
    assert "src/app.py" in shown and "big.txt" in shown and "b/bad.txt" in shown
    assert not shown & {"link-out.txt", "dir-out/secret.txt", "node_modules/pkg/index.js"}
    assert not any(path.startswith((".git", "__pycache__", "proc-dir")) for path in shown)


@pytest.mark.parametrize("only", ["*.py", "*.txt", "[!a]*", None])
def test_grep_with_a_glob_filter(hostile: Path, only: str | None) -> None:
    same("grep", hostile, pattern="needle", glob=only)


def test_grep_caps_and_a_single_file(hostile: Path) -> None:
    same("grep", hostile, pattern="line", limit=7)
    same("grep", hostile, pattern="e", limit=1)
    same("grep", hostile / "big.txt", pattern=SECRET)
    same("grep", hostile, pattern="(", limit=3)


def test_grep_base_outside_the_root(hostile: Path) -> None:
    same("grep", hostile / "src", pattern=SECRET, base=str(hostile / "a"))


GLOBS = [
    "**/z.py",
    "**/*.py",
    "*.py",
    "*.PY",
    "src/*",
    "src/**",
    "*",
    "**/er/*.py",
    "a[!/]b",
    "*[/]z*",
]


@pytest.mark.parametrize("pattern", [*GLOBS, "*.txt", "secret.txt", "fifo*", "*environ*"])
def test_glob_answers_what_the_plain_walk_answered(hostile: Path, pattern: str) -> None:
    out = same("glob", hostile, pattern=pattern)
    assert "secret.txt" not in out and "environ" not in out and "fifo" not in out
    assert "node_modules" not in out and ".git/" not in out


def test_glob_caps_and_bases(hostile: Path) -> None:
    same("glob", hostile, pattern="*", limit=5)
    same("glob", hostile / "src", pattern="*.py", base=str(hostile))
    same("glob", hostile / "src", pattern="*.py", base=str(hostile / "b"))


@pytest.mark.parametrize("pattern", [*GLOBS, "*.txt", "**/*environ*", "name-*"])
async def test_the_daemons_own_glob_answers_what_the_plain_walk_answered(
    session, workdir: Path, hostile: Path, pattern: str
) -> None:
    """search.found_glob: `find` from the daemon, for a pattern with a literal."""
    result = (await session.toolbox.run("glob", {"pattern": pattern, "path": "root"})).to_dict()
    status, out = scan(ORACLE, "glob", hostile, pattern=pattern, base=str(workdir))
    out = out.encode("utf-8", "surrogateescape").decode("utf-8", "replace")  # as run() reads
    assert (result["exit_status"], result["content"]) == (status, out.removesuffix("\n"))


async def test_the_daemons_own_glob_keeps_the_output_cap(
    session, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "OUTPUT_CAP", 300)
    for n in range(60):
        (workdir / f"file-{n:03d}.py").write_text("")
    result = (await session.toolbox.run("glob", {"pattern": "*.py"})).to_dict()
    assert result["content"].startswith("file-000.py\nfile-001.py\n")
    assert "[... " in result["content"] and result["content"].endswith("file-059.py")


@pytest.fixture
def named_like_skipped(tmp_path: Path) -> Path:
    """Files named as the skipped folders are (they are listed: only folders are pruned),
    skipped folders deep down, and a nested repository (entered)."""
    root = tmp_path / "named"
    for folder in ("src/node_modules/pkg", "src/.venv", "nested/.git/objects", "nested/lib"):
        (root / folder).mkdir(parents=True)
    for name in ("node_modules", ".git", "__pycache__", "lib/.pytest_cache"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("a file\n")
    (root / "src" / "node_modules" / "pkg" / "hidden.py").write_text("")
    (root / "src" / ".venv" / "hidden.py").write_text("")
    (root / "nested" / ".git" / "objects" / "hidden.py").write_text("")
    (root / "nested" / "lib" / "kept.py").write_text("")
    (root / "nested" / "kept.py").write_text("")
    return root


@pytest.mark.parametrize("pattern", ["*", "**/*.py", "**/node_modules", "*.git*", "*cache*"])
async def test_files_named_as_skipped_folders_are_found_and_the_folders_pruned(
    session, workdir: Path, named_like_skipped: Path, pattern: str
) -> None:
    out = same("glob", named_like_skipped, pattern=pattern)
    assert "hidden" not in out
    shown = set(out.splitlines())
    if pattern == "*":
        assert {"node_modules", ".git", "__pycache__", "lib/.pytest_cache"} <= shown
        assert {"nested/kept.py", "nested/lib/kept.py"} <= shown
    moved = named_like_skipped  # in the session's folder (tmp_path)
    assert moved.parent == workdir
    result = (await session.toolbox.run("glob", {"pattern": pattern, "path": "named"})).to_dict()
    status, expected = scan(ORACLE, "glob", moved, pattern=pattern, base=str(workdir))
    assert (result["exit_status"], result["content"]) == (status, expected.removesuffix("\n"))
