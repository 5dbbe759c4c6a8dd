"""Live: a session a face holds open, and its one running turn or command.

The editor faces keep their open sessions as Lives, in a `Lives` table (in the order
they were opened). A Live runs one task at a time: a turn or command asked for while
one runs is refused with SessionBusy, in every face. `turn` answers with the turn's
result even when it is cancelled, whether by `cancel` (the user's stop) or by
cancelling the caller (a withdrawn request): both faces answer a cancelled turn
normally, with stop reason `cancelled` and the text it kept.

A face subclasses Live for what its transport keeps beside a session, and hears each
task start and end through `started` / `ended`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..agent import NOT_STARTED, TurnResult, outcome
from ..base.errors import SessionBusy, UnknownSession

if TYPE_CHECKING:  # not imported before a face's first session (start-up time)
    from ..conversation import Content
    from ..session import CommandResult, Session

T = TypeVar("T")
CLOSE_GRACE = 0.6  # a cancelled turn gets this long to kill its tools (SIGTERM, then SIGKILL)
SHOWN_ID = 200  # an unknown id is quoted up to this many characters (its first ones)


class Live:
    def __init__(self, session: Session, measured: bool = True) -> None:
        self.session = session
        self.task: asyncio.Task[Any] | None = None
        self.measured = measured  # the context window is looked up (not for `elelem ask`)
        if measured:
            session.usage.look_up(session.provider)  # in the background (turns/usage.py)

    @property
    def turns(self) -> int:
        """The number of the last turn or command: the session's count, which goes on
        across restarts (a loaded session continues its numbers)."""
        return self.session.turns

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def busy(self) -> bool:
        return self.task is not None

    def started(self) -> None:
        """A turn or command (number `turns`) is starting."""

    def ended(self) -> None:
        """It has ended, cancelled or not."""

    def ensure_idle(self) -> None:
        """SessionBusy if a turn or command is running: the one-at-a-time rule."""
        if self.task is not None:
            raise SessionBusy(f"session {self.id} is busy: a turn is running", sessionId=self.id)

    def _start(self, work: Callable[[], Awaitable[T]]) -> asyncio.Task[T]:
        self.ensure_idle()
        self.session.open_number()  # the turn this task runs takes it
        if self.measured:
            self.session.usage.look_up(self.session.provider)  # again if the provider changed
        self.started()
        task = asyncio.ensure_future(work())
        self.task = task
        return task

    def _end(self) -> None:
        self.task = None
        self.session.close_number()
        self.ended()

    async def turn(self, prompt: Content, attachments: Sequence[Any] = ()) -> TurnResult:
        """Run one turn as the session's running task; its result, cancelled or not.
        Its attachments are expanded inside that task (two turns never expand at
        once); one that is refused (AttachmentError) started no turn: the session
        gives its number back."""
        task = self._start(lambda: outcome(self.session.turn(prompt, attachments)))
        try:
            result = await task
        except asyncio.CancelledError:
            if task.done() and not task.cancelled():
                result = task.result()  # it ended just before the cancel
            else:
                result = NOT_STARTED  # cancelled before it began: nothing was kept
        finally:
            self._end()
        me = asyncio.current_task()
        if me is not None and me.cancelling():  # the caller's cancel ended with the turn
            me.uncancel()
        return result

    async def command(self, line: str) -> CommandResult:
        """Run a slash command as the session's running task. Cancelled, it raises
        CancelledError: no result applies."""
        task = self._start(lambda: self.session.command(line))
        try:
            return await task
        finally:
            self._end()

    async def hold(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run `work` as the session's one task without numbering it (a rewind): no turn
        or command starts in the session meanwhile."""
        self.ensure_idle()
        task = asyncio.ensure_future(work())
        self.task = task
        try:
            return await task
        finally:
            self.task = None

    def cancel(self) -> None:
        """Cancel the running turn or command, if any."""
        if self.task is not None:
            self.task.cancel()

    async def stop(self, grace: float = CLOSE_GRACE) -> None:
        """Cancel the running task and wait (briefly) until its tools are dead."""
        task = self.task
        if task is not None:
            task.cancel()
            await asyncio.wait([task], timeout=grace)

    async def close(self, timeout: float | None = None) -> None:
        """Stop the running task, then release the session (its stored file, provider,
        MCP servers; `timeout`: Session.close's bound)."""
        await self.stop()
        await self.session.close(timeout)


L = TypeVar("L", bound=Live)


class Lives(Generic[L]):
    """The sessions a face holds open, by id, in the order they were opened."""

    def __init__(self) -> None:
        self._open: dict[str, L] = {}

    def add(self, live: L) -> L:
        self._open[live.id] = live
        return live

    def get(self, session_id: str) -> L:
        """The open session, or UnknownSession naming the id (cut if it is long)."""
        live = self._open.get(session_id)
        if live is None:
            shown = session_id[:SHOWN_ID]  # data.sessionId: at most SHOWN_ID characters
            more = "..." if len(session_id) > SHOWN_ID else ""
            raise UnknownSession(f"unknown session: {shown}{more}", sessionId=shown)
        return live

    def find(self, session_id: Any) -> L | None:
        return self._open.get(session_id) if isinstance(session_id, str) else None

    def pop(self, session_id: str) -> L | None:
        return self._open.pop(session_id, None)

    def sessions(self) -> list[Session]:
        return [live.session for live in self._open.values()]

    def __iter__(self) -> Iterator[L]:
        return iter(list(self._open.values()))

    def __len__(self) -> int:
        return len(self._open)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._open
