"""The recorded series' names, the one place they are spelled: ``level:metric:operations``, the
monitoring mixins' convention (the labels it keeps, the metric, what was done to it). The
recording rules that write a series (recordings.py), the alerts and the dashboard panels that read
it (dashboards/queries.py) all take its name from here."""

from __future__ import annotations

from collector.definitions import PREFIX


def recorded(level: str, metric: str, operations: str) -> str:
    """A recorded series: ``metric`` (without the ``searchpulse_`` prefix) summed by the
    labels of ``level`` (``application_variant``: by application and variant)."""
    return f"{level}:{PREFIX}{metric}:{operations}"


def operation(window: str | None) -> str:
    """The operation part of an experiment count's recorded name: ``increase<window>``, or
    ``sum`` for the counters as they stand (summed over collectors, since each started)."""
    return "sum" if window is None else f"increase{window}"


def count_name(level: str, count: str, window: str) -> str:
    """A count's per-second rate over ``window``."""
    return recorded(level, count, f"rate{window}")


def ratio_name(level: str, ratio: str, window: str) -> str:
    """A ratio of two counts' rates over ``window``."""
    return recorded(level, ratio, f"ratio_rate{window}")


def baseline_name(name: str) -> str:
    """The median of a recorded series at earlier offsets (Recordings.baseline)."""
    return f"{name}_baseline"


def variant_series(ratio: str, operations: str) -> str:
    """An experiment rate's series per application and variant: the rate itself
    (``ratio_sum``, ``ratio_increase1d``), its variance, its interval's ends, its difference
    from the control."""
    return recorded("application_variant", ratio, operations)


def interleaving_preference(window: str) -> tuple[str, str]:
    """Each team's Δ against the rest and the half-width of its 95 % interval, over
    ``window``, per application, variant and team."""
    return (recorded("application_variant_team", "interleaving_preference",
                     f"ratio_increase{window}"),
            recorded("application_variant_team", "interleaving_preference_interval",
                     f"ratio_increase{window}"))


SAMPLE_RATIO_CHI2 = recorded("application", "experiment_sample_ratio_chi2", "sum")
