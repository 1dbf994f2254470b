"""Stop a run whose channel is down: N consecutive transport failures abort it, resumably.

A *channel* is where live calls go: the model endpoint of each evaluated model (by label),
the search backend, the leak detector. Every live call reports its final outcome (after
its own retries) through :meth:`FailureStreaks.report`:

- a **transport failure** — the call ended in ``network`` (connect error, dropped
  connection, reset, a garbled 200), ``timeout`` (no complete answer within the deadline)
  or ``server_5xx`` (5xx after the retries) — extends the channel's streak;
- any other outcome resets it: a success, and also an answer that was an error
  (``rate_limit``, ``bad_request``, ``content_policy``, ``response_too_large``, ``unknown``):
  the service answered, so the channel is up. ``auth`` has its own abort.

When a streak reaches the limit (``evaluate.max_consecutive_failures``) the streaks trip
once: :meth:`FailureStreaks.tripped` (awaited beside the trial workers) raises
:class:`ChannelDown`, the run cancels what is in flight, and the trials that met a failure
of the streak are forgotten by the run stores, so a rerun of the same command does them again.
Cached and replayed calls are never reported (they say nothing about the service).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from oracleproto.errors import RunAborted
from oracleproto.harness.faults import NETWORK, SERVER_5XX, TIMEOUT
from oracleproto.harness.llm import LLM_CHANNEL
from oracleproto.harness.replay import CallContext

TRANSPORT_KINDS = frozenset({NETWORK, TIMEOUT, SERVER_5XX})
# How the abort line names each channel; a model channel is named by its label.
CHANNEL_NAMES = {"search": "search calls", "detector": "leak detector calls"}


class ChannelDown(RunAborted):
    """A channel met ``limit`` consecutive transport failures; ``trials`` met one of them."""

    def __init__(self, message: str, trials: frozenset[tuple[str, str, int]]) -> None:
        super().__init__(message)
        self.trials = trials


@dataclass
class _Streak:
    count: int = 0
    last: str = ""
    trials: set[tuple[str, str, int]] = field(default_factory=set)  # (model label, q_id, trial)


class FailureStreaks:
    """Consecutive transport failures per channel; trips once at ``limit``."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max_consecutive_failures must be >= 1, got {limit}")
        self.limit = limit
        self._streaks: dict[tuple[str, str], _Streak] = {}
        self._down: ChannelDown | None = None
        self._event = asyncio.Event()

    @staticmethod
    def channel_of(channel: str, context: CallContext) -> tuple[str, str]:
        """The streak a call counts in: one per model label for model calls, one per service otherwise."""
        return (channel, context.model if channel == LLM_CHANNEL else "")

    def report(self, channel: str, context: CallContext, kind: str | None, detail: str = "") -> None:
        """The final outcome of one live call: ``kind`` None for a success, else its fault kind."""
        key = self.channel_of(channel, context)
        streak = self._streaks.setdefault(key, _Streak())
        if kind not in TRANSPORT_KINDS:
            if self._down is None:  # after the trip, keep every trial that met a failure
                self._streaks[key] = _Streak()
            return
        streak.count += 1
        streak.last = f"{kind}: {detail}" if detail else kind
        streak.trials.add((context.model, context.q_id, context.trial))
        if self._down is None and streak.count >= self.limit:
            what = f"model calls to {key[1]}" if channel == LLM_CHANNEL else CHANNEL_NAMES.get(channel, f"{channel} calls")
            message = f"{streak.count} consecutive {what} failed ({streak.last}); run stopped, resume with the same command"
            self._down = ChannelDown(message, frozenset())
            self._event.set()

    def failed_trials(self) -> frozenset[tuple[str, str, int]]:
        """Trials that met a failure of a channel's current streak (all of them once tripped)."""
        return frozenset(t for streak in self._streaks.values() if streak.count for t in streak.trials)

    async def tripped(self) -> None:
        """Wait until a channel is down, then raise :class:`ChannelDown` (never returns)."""
        await self._event.wait()
        assert self._down is not None
        raise ChannelDown(str(self._down), self.failed_trials())
