"""What a row of collector/definitions.py is: an exposed metric ``Family``, a ``Count`` a rate
divides, a ``Rate`` of docs/metrics.md — the kinds apart from the table of them, which holds
every row once."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    SummaryMetricFamily,
)


@dataclass(frozen=True)
class Family:
    """An exposed metric family: its name as scraped (counters end in ``_total``), its type,
    help text and labels in exposition order (sorted by name); ``attribute``: the
    ``QualitySeries`` (or unit bucket) attribute a quality family is written from."""

    name: str
    type: str  # counter | gauge | histogram | summary
    help: str
    labels: tuple[str, ...] = ()
    attribute: str = ""

    @property
    def stem(self) -> str:
        """The name prometheus_client is given (it adds ``_total`` to a counter)."""
        return self.name.removesuffix("_total") if self.type == "counter" else self.name

    def metric(self, value: float | None = None) -> Metric:
        """The prometheus_client family of this row: with ``value``, its one unlabelled
        sample; without, empty, for ``add_metric`` per label set."""
        kind = _METRIC_FAMILIES[self.type]
        if value is None:
            return kind(self.stem, self.help, labels=self.labels)
        return kind(self.stem, self.help, value=value)


_METRIC_FAMILIES = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily,
                    "histogram": HistogramMetricFamily, "summary": SummaryMetricFamily}


@dataclass(frozen=True)
class Count:
    """A count a rate divides. ``name``: its recorded name (recording rules
    ``level:searchpulse_<name>:rate<window>``, replay summary key); ``sample``: the scraped
    series that counts it; ``attribute``: its name among per-query totals (QualitySeries
    attribute, unit-bucket attribute, store column, the oracle's totals); ``difference``:
    (whole, part) for a count derived as whole − part, ``total``: (one, other) for a count
    derived as one + other, neither with a series of its own."""

    name: str
    sample: str = ""
    attribute: str = ""
    difference: tuple[str, str] | None = None
    total: tuple[str, str] | None = None
    # 0 where totals do not carry it: the store's rows (which hold no untracked search) and
    # the scrapes of a collector from before it was counted
    optional: bool = False


@dataclass(frozen=True)
class Rate:
    """A rate of docs/metrics.md: Σ numerator / Σ denominator (never a mean of ratios), "no
    data" when the denominator is 0. ``key``: its replay-summary key; ``title`` and ``unit``:
    its dashboards' (Grafana unit); ``panel``: the overview's headline stat that shows it."""

    key: str
    numerator: str  # a COUNTS name
    denominator: str  # a COUNTS name
    title: str
    definition: str  # in words, as docs/metrics.md's table of rates has it
    unit: str = "percentunit"
    panel: int | None = None

    @property
    def ratio(self) -> str:
        """Its name in the recording rules: ``…:searchpulse_<ratio>:ratio_rate<window>``."""
        return f"{self.numerator}_per_{self.denominator}"

    @property
    def noun(self) -> str:
        """The title inside a sentence: "zero-result rate", "CTR"."""
        return self.title if self.title[:2].isupper() else self.title[0].lower() + self.title[1:]
