"""DaemonFiles: a daemon session's files, served by the editor where the client can.

An `EditorFiles` (filesystem.py), the seam every editor read goes through: what the
client declared in `initialize` decides each direction (protocol.md, "Files"), read
from the daemon's own dict and pair at each call, so a later `initialize` holds for
every session:

- `read` (`capabilities.files.read`): `files/read {sessionId, path}` answers `{text,
  version}` for a document the editor has open (unsaved changes included) or `null`,
  and the disk is read. Without it, ACP's `fs/read_text_file` when the client offered
  `capabilities.fs.readTextFile` (jsonrpc/files.py), as the ACP face reads;
- `apply`: a change that is not reviewed, to a document the editor has open, goes to
  `files/propose` with `review: false`, and the editor applies it to the buffer;
- `review`: a change the policy reviews goes to `files/propose` with `review: true`.

Any other write goes to `fs/write_text_file` when the client offered
`capabilities.fs.writeTextFile`, else to the disk. An answer is checked (`changes.verify`);
an accepted change the editor did not apply to a buffer (`applied: false`) is written
to the disk here, if the disk still holds the text that was reviewed. A question is
bounded: EDITOR_WAIT seconds for a read or an unreviewed change
(ELELEM_EDITOR_TIMEOUT, default 30: the bound of every editor request, jsonrpc/files.py),
and a review by REVIEW_TIMEOUT (ELELEM_REVIEW_TIMEOUT, default 1800: half an hour
for a person to decide; 0: no bound). Either is withdrawn (`$/cancelRequest`) when it
runs out or the turn is cancelled, and the model reads that nothing was applied. So is
its size: a change whose `oldText` and `newText` pass PROPOSE_CAP characters together
(ELELEM_PROPOSE_CAP, default ELELEM_FILE_CAP) is not sent, and fails the same way.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ...base.config import number
from ...edits.changes import UNKNOWN, BadAnswer, Change, Outcome, verify
from ...edits.filesystem import FILE_CAP, EditorFiles, FileState, LocalFiles
from ...edits.hunks import split
from ...jsonrpc.files import EDITOR_WAIT, fs_methods
from .events import Events, Peer

REVIEW_TIMEOUT = number("ELELEM_REVIEW_TIMEOUT", 1800)
PROPOSE_CAP = int(number("ELELEM_PROPOSE_CAP", FILE_CAP, minimum=1))  # oldText + newText
VERSION_CAP = 256  # characters of a string version


class EditorTimeout(Exception):
    """The editor did not answer in time."""


class DaemonFiles(EditorFiles):
    def __init__(
        self, peer: Peer, events: Events, capabilities: dict[str, bool], fs: list[bool]
    ) -> None:
        super().__init__(self._editor_read, self._fs_write)
        self.peer = peer
        self.events = events
        self.capabilities = capabilities  # the daemon's: a later initialize updates it
        self.fs = fs  # the daemon's capabilities.fs [readTextFile, writeTextFile], likewise
        self.disk = LocalFiles()

    @property
    def reviews(self) -> bool:  # type: ignore[override]
        return self.capabilities.get("review", False)

    async def _request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        try:
            async with asyncio.timeout(timeout or None):  # not wait_for: it can lose a cancel
                return await self.peer.request(method, params)
        except TimeoutError:
            raise EditorTimeout(
                f"the editor did not answer {method} within {timeout:g} s"
            ) from None

    # -- reading --------------------------------------------------------------------
    async def _editor_read(self, path: Path) -> FileState | str | None:
        """EditorFiles' `read`: `files/read`, else `fs/read_text_file`, else None."""
        if self.capabilities.get("read"):
            return await self._read(path)
        if self.fs[0]:
            read, _ = fs_methods(self.peer.request, self._session_id(), True, False)
            assert read is not None
            return await read(path)
        return None

    async def _fs_write(self, path: Path, text: str) -> None:
        """EditorFiles' `write`: `fs/write_text_file` when offered, else the disk."""
        if not self.fs[1]:
            await self.disk.write_text(path, text)
            return
        _, write = fs_methods(self.peer.request, self._session_id(), False, True)
        assert write is not None
        await write(path, text)

    def _session_id(self) -> str:
        return self.events.session_id or ""

    async def _read(self, path: Path) -> FileState | None:
        """The editor's document, or None when it does not have it open."""
        params = {"sessionId": self.events.session_id, "path": str(path)}
        try:
            answer = await self._request("files/read", params, EDITOR_WAIT)
        except EditorTimeout as exc:
            raise OSError(f"{path}: {exc}") from None
        except Exception as exc:  # an error response, or the client went away
            raise OSError(f"the editor could not read {path}: {exc}") from None
        if answer is None:
            return None
        problem = _read_problem(answer)
        if problem:
            raise OSError(f"the editor's answer to files/read for {path} is not valid: {problem}")
        return FileState.of(answer["text"], answer["version"], editor=True)

    # -- writing --------------------------------------------------------------------
    async def write_text(self, path: Path, text: str) -> int:
        """A plain write (a plugin's): through the buffer when the editor has the file
        open and applies changes, else to the disk."""
        base = await self.snapshot(path, errors="replace")
        change = Change(
            path, str(path), base, text, await asyncio.to_thread(split, base.text, text)
        )
        outcome = await self.propose(change)
        if not outcome.landed:
            raise OSError(f"{path}: not written: {outcome.reason or outcome.outcome}")
        return len(text.encode("utf-8"))

    async def propose(self, change: Change, review: bool = False) -> Outcome:
        """Land the change (review: after the user's review in the editor)."""
        through = self.capabilities.get("review") if review else self.capabilities.get("apply")
        if not through or (not review and not change.base.editor):
            if review:
                raise ValueError("the client does not review changes")
            return await self._land(change)  # not open in the editor: fs/write or the disk
        size = len(change.old or "") + len(change.new)  # a new file has no old text
        if size > PROPOSE_CAP:  # one message the editor must hold whole, twice over
            return Outcome(
                "failed",
                reason=f"not applied: the change is {size} characters, more than the editor "
                f"is sent to review ({PROPOSE_CAP}, ELELEM_PROPOSE_CAP)",
            )
        params = {
            "sessionId": self.events.session_id,
            "turnId": self.events.turn_id,
            "toolCallId": self.events.call_id,
            "path": str(change.path),
            "review": review,
            "oldText": change.old,
            "newText": change.new,
            "hunks": [hunk.to_wire() for hunk in change.hunks],
            "baseVersion": change.base.version,
        }
        limit = REVIEW_TIMEOUT if review else EDITOR_WAIT
        try:
            answer = await self._request("files/propose", params, limit)
        except EditorTimeout as exc:
            what = "the review got no answer" if review else "the editor did not answer"
            return Outcome("failed", reason=f"not applied: {what} within {limit:g} s ({exc})")
        except Exception as exc:  # an error response, or the client went away
            return Outcome("failed", reason=f"not applied: the editor could not take it: {exc}")
        return await self._outcome(change, answer)

    async def _land(self, change: Change) -> Outcome:
        """A change not for files/propose, as LocalFiles lands one (a conflict when the
        file no longer holds its base), written through `fs/write_text_file` or the disk."""
        now = await self.snapshot(change.path, errors="replace")
        if now.digest != change.base.digest:
            return Outcome("conflict")
        await EditorFiles.write_text(self, change.path, change.new)
        return Outcome("accepted", tuple(h.id for h in change.hunks), change.new)

    async def _outcome(self, change: Change, answer: Any) -> Outcome:
        """The answer checked; an accepted change the editor did not apply, on disk."""
        try:
            if not isinstance(answer, dict):
                raise BadAnswer(f"expected an object, got {type(answer).__name__}")
            outcome, applied = answer.get("outcome"), answer.get("applied")
            text, reason = answer.get("text"), answer.get("reason")
            if isinstance(text, str) and len(text) > FILE_CAP:
                raise BadAnswer(f"text is {len(text)} characters, past {FILE_CAP}")
            if reason is not None and not isinstance(reason, str):
                raise BadAnswer("reason must be a string")
            checked = verify(change, outcome, answer.get("acceptedHunks"), text)
            if checked.landed and not isinstance(applied, bool):
                raise BadAnswer("applied must be true (the editor applied it) or false")
        except BadAnswer as exc:
            landed = answer.get("applied") is True if isinstance(answer, dict) else False
            if landed:  # the buffer may have changed: the model must read it again
                return Outcome("failed", reason=UNKNOWN.format(problem=exc), unknown=True)
            return Outcome("failed", reason=f"not applied: the editor's answer is not valid: {exc}")
        accept_all = answer.get("acceptAllForTurn") is True
        if not checked.landed:
            return Outcome(checked.outcome, reason=reason)
        if not applied:  # reviewed in a scratch view: the daemon writes the disk
            assert checked.text is not None
            on_disk = Change(change.path, change.shown, change.base, checked.text, change.hunks)
            written = await self.disk.propose(on_disk)
            if not written.landed:
                return written
        return Outcome(checked.outcome, checked.accepted, checked.text, reason, accept_all)


def _read_problem(answer: Any) -> str | None:
    if not isinstance(answer, dict):
        return f"expected {{text, version}} or null, got {type(answer).__name__}"
    text, version = answer.get("text"), answer.get("version")
    if not isinstance(text, str):
        return "text must be a string"
    if len(text) > FILE_CAP:
        return f"text is {len(text)} characters, past {FILE_CAP} (ELELEM_FILE_CAP)"
    if isinstance(version, bool) or not isinstance(version, int | str):
        return "version must be an integer or a string"
    if isinstance(version, str) and len(version) > VERSION_CAP:
        return f"version is longer than {VERSION_CAP} characters"
    return None
