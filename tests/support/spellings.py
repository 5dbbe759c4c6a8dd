"""The issue 36 spellings of `rm -f x` that a deny rule on `rm` must hold against
(tests/builtin/test_deny_spellings.py, tests/faces/terminal/test_deny_faces.py,
tests/e2e/test_deny_always.py)."""

# The 15 spellings of `rm -f x`: the two literal ones that already held, then
# the 13 that deleted the file.
SPELLINGS = [
    "rm -f x",
    "echo hi; rm -f x",
    " rm -f x",
    "\trm -f x",
    "\\rm -f x",
    "/bin/rm -f x",
    "'rm' -f x",
    "r''m -f x",
    "command rm -f x",
    "env rm -f x",
    "(rm -f x)",
    "{ rm -f x; }",
    "$(echo rm) -f x",
    "echo x | xargs rm -f",
    "find . -name x -delete",
]
