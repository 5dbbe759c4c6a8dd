"""Programs that run another program, programs that run code no rule sees, and the
equivalents of a program (commands.py reads the command line; this reads one simple
command's words). docs/permissions.md lists them.

`unwrap(argv, parsed, read)` adds the program of `argv` to `parsed`, then what it runs:
- a wrapper's program (`command`, `builtin`, `exec`, `env`, `nice`, `nohup`, `timeout`,
  `xargs`, `sudo`, `doas`, `setsid`, `stdbuf`, `ionice`, `chroot`, `taskset`, `time`,
  `busybox`, `coproc`), its options skipped by a table; an option the table does not
  know means the program cannot be told;
- a shell's `-c STRING`, read again as a command line (`read`), and `env -S STRING`;
- `find`'s `-exec`, `-execdir`, `-ok`, `-okdir` commands, and `-delete` as `rm`;
- `unlink F` and `shred -u F` as `rm`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .commands import Parsed

Word = str | None  # None: a word bash computes


@dataclass(frozen=True)
class Wrapper:
    """How a program that runs another one reads its options."""

    flags: str = ""  # one-letter options without a value
    valued: str = ""  # one-letter options whose value is attached or the next word
    switches: tuple[str, ...] = ()  # long options without a value
    long: tuple[str, ...] = ()  # long options whose value is `=VALUE` or the next word
    skip: int = 0  # words after the options before the program (timeout's DURATION)
    assignments: bool = False  # `NAME=VALUE` words come before the program


WRAPPERS = {
    "command": Wrapper("pvV"),
    "builtin": Wrapper(),
    "exec": Wrapper("cl", "a"),
    "env": Wrapper("i0v", "uCS", ("--ignore-environment", "--null", "--debug"),
                   ("--unset", "--chdir", "--split-string"), assignments=True),
    "nice": Wrapper("", "n", (), ("--adjustment",)),
    "nohup": Wrapper(),
    "timeout": Wrapper("v", "sk", ("--foreground", "--preserve-status", "--verbose"),
                       ("--signal", "--kill-after"), skip=1),
    "sudo": Wrapper("AbEHKknPSBVsi", "ugCDhprtUT",
                    ("--preserve-env", "--login", "--shell", "--non-interactive"),
                    ("--user", "--group", "--chdir", "--close-from", "--prompt", "--role",
                     "--type", "--other-user"), assignments=True),
    "doas": Wrapper("ns", "uC"),
    "setsid": Wrapper("cfw", "", ("--ctty", "--fork", "--wait")),
    "stdbuf": Wrapper("", "ioe", (), ("--input", "--output", "--error")),
    "ionice": Wrapper("t", "cn", ("--ignore",), ("--class", "--classdata")),
    "chroot": Wrapper("", "", ("--skip-chdir",), ("--userspec", "--groups"), skip=1),
    "taskset": Wrapper("ac", "", ("--all-tasks", "--cpu-list"), skip=1),
    "time": Wrapper("pav", "fo", ("--append", "--verbose", "--portability"),
                    ("--format", "--output")),
    "busybox": Wrapper(),
    "toybox": Wrapper(),
    "coproc": Wrapper(),
    "xargs": Wrapper("0rtpxo", "adEILnPs",
                     ("--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit",
                      "--open-tty"),
                     ("--arg-file", "--delimiter", "--eof", "--replace", "--max-lines",
                      "--max-args", "--max-procs", "--max-chars", "--process-slot-var")),
}  # fmt: skip
# xargs -e[EOF], -i[R], -l[N]: a value only when attached
ATTACHED_ONLY = {"xargs": "eil"}
SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "fish", "csh", "tcsh", "yash"}
)
# Read no program from the command line, or run code a rule cannot see in it.
CANNOT_TELL = frozenset({"eval", "source", ".", "alias", "trap", "enable", "fc", "hash", "let"})
# Builtins that assign to a name they are given (`printf -v`, `read`, `test -v` reads
# one): a subscript in it is evaluated, command substitutions included.
NAMING = {"printf": "-v", "test": "-v", "[": "-v", "read": "", "mapfile": "", "readarray": "",
          "getopts": "", "wait": "-p"}  # fmt: skip
INTERPRETERS = frozenset(
    {"node", "nodejs", "deno", "bun", "bunx", "perl", "ruby", "php", "lua", "luajit",
     "Rscript", "R", "julia", "tclsh", "wish", "awk", "gawk", "mawk", "nawk", "busybox-awk",
     "make", "gmake", "just", "ninja", "npm", "npx", "pnpm", "pnpx", "yarn", "uv", "uvx",
     "pipx", "pip", "pip3", "poetry", "pdm", "hatch", "tox", "nox", "cargo", "go",
     "gradle", "gradlew", "mvn", "rake", "bundle", "invoke", "expect", "osascript",
     "pwsh", "powershell", "vim", "vi", "nvim", "ex", "emacs", "gdb", "java", "jshell",
     "groovy", "scala", "elixir", "escript", "erl", "guile", "racket", "sbcl", "swift",
     "runghc", "ghci", "crontab"}
)  # fmt: skip
# Run another program from words this module does not read: what runs cannot be told.
UNREAD = frozenset(
    {"su", "sg", "script", "watch", "flock", "parallel", "systemd-run", "at", "batch",
     "strace", "ltrace", "valgrind", "chrt", "unshare", "nsenter", "setpriv", "runuser",
     "firejail", "bwrap", "proot", "fakeroot", "xvfb-run", "dbus-launch", "dbus-run-session",
     "ssh", "tmux", "screen", "catchsegv", "perf", "entr"}
)  # fmt: skip
PYTHON = re.compile(r"(python|pypy)[0-9.]*")
SYSTEM_BINS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
# Variables that change what a program name means, or load code into what runs.
STEERING = frozenset(
    {"PATH", "BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
     "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "IFS"}
)  # fmt: skip
# bash's reserved words: never a program, so a parse naming one misread the line
# (tree-sitter-bash reads `! { rm x; }` as a command named `{`)
RESERVED = frozenset(
    {"{", "}", "!", "[[", "]]", "if", "then", "else", "elif", "fi", "case", "esac", "for",
     "select", "while", "until", "do", "done", "in", "function"}
)  # fmt: skip
FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


Read = Callable[[str], None]  # reads a command line given as a string (`sh -c`)


def unwrap(argv: Sequence[Word], found: Parsed, read: Read, depth: int = 0) -> None:
    """Add argv's program to `found`, and what it runs (the module's docstring)."""
    from .commands import Program

    spelled = argv[0]
    if spelled is None:
        found.cannot_tell("a program's name is computed (`$(…)`, a variable)")
        return
    name = posixpath.basename(spelled.rstrip("/")) or spelled
    words = tuple(word if word is not None else "$?" for word in argv[1:])
    if not found.add(Program((name, *words), spelled)) or depth > 8:
        if depth > 8:
            found.cannot_tell("wrappers nested too deep")
        return
    text = " ".join((spelled, *words))
    if "/" in spelled and (not spelled.startswith(SYSTEM_BINS) or ".." in spelled.split("/")):
        found.runs_code(text)  # a file run by its path: written code
    if spelled in RESERVED:
        found.cannot_tell(f"the parser read the reserved word `{spelled}` as a program")
    elif name in CANNOT_TELL:
        found.cannot_tell(f"`{name}` runs what the command line does not show")
    elif (
        name in NAMING
        and (not NAMING[name] or NAMING[name] in argv)
        and any(word is None or "[" in word for word in argv[1:])
    ):
        found.cannot_tell(f"`{name}` is given a name with a subscript, which bash evaluates")
    elif name in UNREAD:
        found.cannot_tell(f"`{name}` runs a command elelem does not read")
    elif name in INTERPRETERS or PYTHON.fullmatch(name):
        found.runs_code(text)
    elif name == "git" and any(
        (word or "").startswith(("-c", "--config-env", "--exec-path")) for word in argv[1:]
    ):
        found.cannot_tell("`git -c` can name a program (`core.pager`, an alias)")
    elif name in SHELLS:
        _shell(argv, found, read, text)
    elif name == "find":
        _find(argv, found, read, depth)
    elif name in ("unlink", "shred") and (name == "unlink" or _has(argv, "-u", "--remove")):
        found.add(Program(("rm", *words), name))
    elif name in WRAPPERS:
        start = _program_at(name, argv, found, read)
        if start is not None and start < len(argv):
            unwrap(argv[start:], found, read, depth + 1)
        elif start is not None and name == "xargs":
            found.add(Program(("echo",), "xargs"))


def _program_at(name: str, argv: Sequence[Word], found: Parsed, read: Read) -> int | None:
    """Where a wrapper's program starts in argv (len(argv): none), or None when it
    cannot be told."""
    wrapper, attached = WRAPPERS[name], ATTACHED_ONLY.get(name, "")
    index = 1
    while index < len(argv):
        word = argv[index]
        if word is None:
            found.cannot_tell(f"`{name}` is given a computed word")
            return None
        if word == "--":
            index += 1
            break
        if name == "nice" and word[1:].isdigit() and word.startswith("-"):
            index += 1  # nice -5
            continue
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            option, equals, given = word.partition("=")
            if option not in wrapper.switches + wrapper.long:
                found.cannot_tell(f"`{name}` has an option elelem does not know: {word}")
                return None
            if option == "--split-string":
                return _split(argv[index + 1] if not equals and index + 1 < len(argv) else given,
                              found, read, argv)  # fmt: skip
            index += 2 if option in wrapper.long and not equals else 1
            continue
        for position, letter in enumerate(word[1:], 1):
            rest = word[position + 1 :]
            if letter in attached:
                break
            if letter in wrapper.valued:
                if name == "env" and letter == "S":
                    split = rest or (argv[index + 1] if index + 1 < len(argv) else "")
                    return _split(split, found, read, argv)
                index += 0 if rest else 1
                break
            if letter not in wrapper.flags:
                found.cannot_tell(f"`{name}` has an option elelem does not know: {word}")
                return None
        index += 1
    while wrapper.assignments and index < len(argv) and _assigns(argv[index]):
        if (argv[index] or "").partition("=")[0] in STEERING:
            found.cannot_tell(f"`{name}` sets {(argv[index] or '').partition('=')[0]}")
            return None
        index += 1
    return min(index + wrapper.skip, len(argv))


def _assigns(word: Word) -> bool:
    return word is not None and "=" in word and not word.startswith("=")


def _split(given: Word, found: Parsed, read: Read, argv: Sequence[Word]) -> int | None:
    """`env -S STRING`: STRING is split into a command line (read as one)."""
    if given is None:
        found.cannot_tell("`env -S` is given a computed string")
        return None
    read(given)
    return len(argv)


def _shell(argv: Sequence[Word], found: Parsed, read: Read, text: str) -> None:
    """`sh -c STRING` is read as a command line; a shell given a file runs code; one
    reading its input cannot be told."""
    command, options, valued = False, True, False
    for word in argv[1:]:
        if word is None:
            found.cannot_tell("a shell is given a computed word")
            return
        if valued:
            valued = False  # the value of `-o`, `--rcfile`: no file to run
            continue
        if options and word in ("-", "--"):
            options = False
            continue
        if options and word.startswith(("-", "+")):
            valued = word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file")
            command = command or ("c" in word[1:] and not word.startswith("--"))
            continue
        if command:
            read(word)
        else:
            found.runs_code(text)  # a file of commands (`sh build.sh`)
        return
    found.cannot_tell(f"`{argv[0]}` reads its commands from its input")  # `… | sh`


def _find(argv: Sequence[Word], found: Parsed, read: Read, depth: int) -> None:
    from .commands import Program

    if any(word is None for word in argv[1:]):
        found.cannot_tell("`find` is given a computed word (it may be `-delete` or `-exec`)")
        return
    words = [word or "" for word in argv[1:]]
    starts = []
    for word in words:
        if word.startswith("-") or word in ("(", "!", ")", ","):
            break
        starts.append(word)
    index = 0
    while index < len(words):
        word = words[index]
        if word == "-delete":
            found.add(Program(("rm", "-r", *(starts or ["."])), "find -delete"))
        elif word in FIND_RUNS:
            end = index + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            inner = words[index + 1 : end]
            if inner:
                unwrap(inner, found, read, depth + 1)
            index = end
        index += 1


def _has(argv: Sequence[Word], short: str, long: str) -> bool:
    return any(
        word == long or (word.startswith("-") and not word.startswith("--") and short[1] in word)
        for word in argv[1:]
        if word is not None
    )
