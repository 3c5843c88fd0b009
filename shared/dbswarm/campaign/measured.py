"""What a campaign's loop reads of the run it just measured: a peak search's step
(``search.step_figures``) and ``fanout.adaptive``'s attempt (``adaptive.advance``) read the run's
main merged phase (its run phase, else its load phase) through ``MeasuredPhase``.

The phase is ``results.phase.PhaseResult``, built by the results layer (``run.runtime.service``
hands it over); campaign/ stands below results/ in the import contract, so it names only what it
reads, as a protocol that ``PhaseResult`` satisfies (mypy checks it where the phase is handed).
"""
from __future__ import annotations

from typing import Any, Optional, Protocol


class SteadyWindow(Protocol):
    @property
    def window(self) -> list[int]:
        """The steady-state window [start, end) in epoch seconds ([] without one)."""
        ...


class MeasuredPhase(Protocol):
    @property
    def status(self) -> Optional[str]: ...

    @property
    def throughput(self) -> Optional[float]: ...

    @property
    def error_rate(self) -> Optional[float]: ...

    @property
    def operations(self) -> dict[str, dict[str, Any]]:
        """Per operation: its merged figures (``p99_us``, and ``intended`` at a target rate)."""
        ...

    @property
    def timeline(self) -> dict[str, Any]:
        """``start`` (epoch second) and ``ops``: per operation, the operations of each second."""
        ...

    @property
    def steady(self) -> Optional[SteadyWindow]: ...

    @property
    def client(self) -> dict[str, Any]:
        """The load generator's health: ``verdict``, ``reason``, ``allowed`` (docs/client-health.md)."""
        ...
