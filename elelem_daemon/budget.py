"""The round budget: the tool results of one round (the calls of one model reply)
take at most ROUND_CAP characters (ELELEM_ROUND_CAP, default 4,000,000) in the
conversation sent back to the model. Each tool caps its own result (`read`,
`execute`); this bounds what a reply asking for 1,000 of them costs.

Once the budget is spent, the round's remaining calls do not run: each gets a
failure the model reads (`not run: ...`), so it can ask again in the next round.
A result that would pass the cap is replaced by a failure saying how large it was.
Clients still see each result that ran (`event/result`) whole.

Each result is also cut to `each` characters when given: the share of the model's
context window one result may take (ELELEM_TOOL_SHARE, context/compaction.py). The cut
keeps the result's start and says how much was left out, so the model can ask for
less at a time.

A turn is bounded in total too (issue 36), checked before each request: the tool
traffic of the turn so far (its calls and results, what the next request carries
besides the kept history) takes at most TURN_CAP characters (ELELEM_TURN_CAP, default
32 MiB), and a whole request at most REQUEST_CAP (ELELEM_REQUEST_CAP, default 96 MiB,
above one streamed answer's ELELEM_MAX_REPLY so a kept long reply still goes), whether
or not the model's window is known. A request past either is not sent: the turn ends
with stop reason `max_turn_requests` and a reply saying which bound it met.
"""

from __future__ import annotations

from .base.config import number
from .result import Result

ROUND_CAP = int(number("ELELEM_ROUND_CAP", 4000000, minimum=1))
TURN_CAP = int(number("ELELEM_TURN_CAP", 32 * 1024 * 1024, minimum=1))
REQUEST_CAP = int(number("ELELEM_REQUEST_CAP", 96 * 1024 * 1024, minimum=1))


def past_caps(request: int, traffic: int) -> str | None:
    """Why a request of `request` characters, `traffic` of them the turn's tool traffic,
    is not sent (the turn's last reply); None when it is within both caps."""
    if traffic > TURN_CAP:
        return (
            f"[stopped: this turn's tool calls and results came to {traffic} characters, "
            f"past ELELEM_TURN_CAP ({TURN_CAP}); ask for less at a time]"
        )
    if request > REQUEST_CAP:
        return (
            f"[stopped: the next request would carry {request} characters, past "
            f"ELELEM_REQUEST_CAP ({REQUEST_CAP}): /compact to summarise the conversation, "
            "or /clear to start over]"
        )
    return None


class RoundBudget:
    def __init__(self, cap: int | None = None, each: int | None = None) -> None:
        self.cap = ROUND_CAP if cap is None else cap
        self.each = each
        self.used = 0

    @property
    def spent(self) -> bool:
        return self.used >= self.cap

    def skipped(self) -> Result:
        """The result of a call that does not run: the budget is spent."""
        return Result.failure(
            f"not run: this round's tool results reached {self.cap} characters "
            "(ELELEM_ROUND_CAP); call it again in the next round, asking for less at a time"
        )

    def admit(self, result: Result) -> str:
        """The JSON the model reads for result, within what is left of the budget."""
        text = cut(result.to_json(), self.each)
        if self.spent:  # a call that did not run: its short failure
            return text
        if self.used + len(text) > self.cap:
            self.used = self.cap  # spent: what follows does not run
            return Result.failure(
                f"result dropped: {len(text)} characters, past what is left of this round's "
                f"{self.cap} (ELELEM_ROUND_CAP); ask for less at a time"
            ).to_json()
        self.used += len(text)
        return text


def cut(text: str, each: int | None) -> str:
    """`text` within `each` characters, its start kept and the cut said."""
    if each is None or len(text) <= each:
        return text
    note = (
        f"\n[cut: this result was {len(text)} characters, past the share of the model's "
        "context window one result may take (ELELEM_TOOL_SHARE); ask for less at a time]"
    )
    return text[: max(each - len(note), 0)] + note
