"""The editor's context in the prompt (docs/context.md): part of the core.

What the user points at (attachments a client sends, `@` mentions typed in the text,
the live editor state) becomes what the model reads, the same from every face:

- `blocks`: the one format of attachment blocks (render, escape, parse back);
- `attachments`: the shapes a client sends, checked;
- `mentions`: `@` references in the text;
- `expansion`: text + attachments + mentions -> the user message (`Session.turn`
  calls it, so no face can skip it);
- `paths`, `listing`: the files under a cwd, for `@` completion and folders;
- `editor_state`: the live `editor/state`, a note ahead of the turn's prompt;
- `environment`: where the agent runs, the system prompt's fixed block;
- `prefix`: says once what changed in the prompt's stable prefix (transcript.py).
- `compaction`: the model's window kept from filling: the history summarised ahead of
  it and when the server refuses a request as too long, tool results cut to a share;
  `summary` (the summary on the cached prefix, or in pieces), `keepsakes` (what a
  compaction carries word for word), `clearing` (old tool results inside a long turn);
- `fit`: an attachment cut to its share of the window, and said.

Nothing is imported here: a session pays for these modules when it uses them.
"""


def as_is(text: str, attachments: object = ()) -> bool:
    """Whether the user message `expansion.expand(text, attachments)` makes is `text`
    itself: no attachments, no `@` (so no mention), no `<` (so nothing to escape,
    blocks.py). `Session.turn` then skips the expansion and its imports."""
    return (
        isinstance(attachments, list | tuple)
        and not attachments
        and "@" not in text
        and "<" not in text
    )
