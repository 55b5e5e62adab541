"""Terminal lines and tables of a run's summary (pure functions of the summary JSON)."""

from gtog.eval.terminal._routing import routing_line

__all__ = ["routing_line"]
