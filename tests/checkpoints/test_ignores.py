"""What a checkpoint leaves out: what the project's `.gitignore` and the user's
`.git/info/exclude` ignore (also from a repository above the folder), the `.git`
folder, and nested repositories (their own business)."""

from __future__ import annotations

from pathlib import Path

from elelem_daemon.checkpoints import Checkpoints, Settings

from .support import git, repo_state


def saved(checkpoints: Checkpoints) -> list[str]:
    shadow = f"--git-dir={checkpoints.folder}"
    return git(checkpoints.cwd, shadow, "ls-tree", "-r", "--name-only", "HEAD").splitlines()


async def test_gitignore_and_info_exclude_are_honoured(project: Path, settings: Settings) -> None:
    git(project, "init", "-q")
    (project / ".gitignore").write_text("*.log\n/dist/\n")
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("notes/\n")
    for path in ("a.log", "dist/x.js", "notes/n.txt", "src/dist/kept.js", "src/b.py"):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(path)
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    assert saved(checkpoints) == [".gitignore", "src/b.py", "src/dist/kept.js"]
    (project / "notes" / "n.txt").write_text("changed")
    assert (await checkpoints.restore("s", 1)).restored == []
    assert (project / "notes" / "n.txt").read_text() == "changed"


async def test_a_subfolder_keeps_the_patterns_that_match_at_any_depth(
    tmp_path: Path, settings: Settings
) -> None:
    top = tmp_path / "repo"
    (top / "sub" / "build").mkdir(parents=True)
    git(top, "init", "-q")
    (top / ".gitignore").write_text("*.tmp\n/build/\ncache/\n")
    (top / ".git" / "info" / "exclude").write_text("*.secret\n")
    for path in ("sub/x.tmp", "sub/build/out", "sub/cache/c", "sub/k.secret", "sub/ok.py"):
        (top / path).parent.mkdir(parents=True, exist_ok=True)
        (top / path).write_text(path)
    checkpoints = Checkpoints(top / "sub", settings)
    assert (await checkpoints.begin("s", 1)).ok
    assert saved(checkpoints) == ["build/out", "ok.py"]  # /build/ is the top's, not sub's


async def test_nested_repositories_are_left_out(project: Path, settings: Settings) -> None:
    lib = project / "vendor" / "lib"
    lib.mkdir(parents=True)
    git(lib, "init", "-q")
    (lib / "code.c").write_text("int x;\n")
    git(lib, "add", "code.c")
    git(lib, "commit", "-qm", "theirs")
    theirs = repo_state(lib)
    (project / "main.c").write_text("int main;\n")
    checkpoints = Checkpoints(project, settings)
    assert (await checkpoints.begin("s", 1)).ok
    assert saved(checkpoints) == ["main.c"]
    (lib / "code.c").write_text("changed\n")
    (project / "vendor" / "later").mkdir()
    (project / "vendor" / "later" / "inner").mkdir()
    git(project / "vendor" / "later" / "inner", "init", "-q")
    (project / "vendor" / "later" / "inner" / "f").write_text("f")
    (project / "main.c").write_text("changed\n")
    assert (await checkpoints.end("s", 1)).ok
    assert saved(checkpoints) == ["main.c"]
    done = await checkpoints.restore("s", 1)
    assert done.restored == ["main.c"] and (lib / "code.c").read_text() == "changed\n"
    (lib / "code.c").write_text("int x;\n")
    assert repo_state(lib) == theirs
