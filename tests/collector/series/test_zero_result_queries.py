"""The live top-K's release: the rule of distinct clients and the length before any detector,
and the detector time of new text bounded per release (most frequent first, across
applications), what the budget did not reach withheld as ``not_scanned_yet`` and read later."""

from __future__ import annotations

from collector.privacy import personal_data as pd
from collector.privacy.personal_data import PersonalData
from collector.series.zero_result_queries import QueryRelease


class CountingDetectors(PersonalData):
    """The real detectors, counting the texts they read."""

    def __init__(self) -> None:
        super().__init__(max_chars=40)
        self.read: list[str] = []

    def _reason(self, text: str) -> str | None:
        if len(text) <= self.max_chars:
            self.read.append(text)
        return super()._reason(text)


def candidate(query: str, searches: int, clients: int, without_client: int = 0):
    return (query, searches, frozenset(range(clients)), without_client)


def test_few_clients_and_long_text_are_decided_without_reading_the_text():
    detectors = CountingDetectors()
    release = QueryRelease(10, 3, detectors)
    released = release.release({"web": [
        candidate("call 020 7946 0958", 9, 1), candidate("x" * 41, 8, 5),
        candidate("jon berg 27 elm street", 7, 1, without_client=6),
        candidate("call 0612345678", 6, 3), candidate("tent", 5, 3)]})
    assert detectors.read == ["call 0612345678", "tent"]
    assert released.shown == {"web": [("tent", 5)]}
    assert released.withheld == {"web": {"fewer_distinct_clients": 1, "too_long": 1,
                                         "without_client_id": 1, "phone_number": 1}}


def test_new_text_is_read_within_the_budget_most_frequent_first_across_applications():
    ticks = iter(range(1000))
    clock = lambda: next(ticks) * 0.010  # noqa: E731 - every reading of the clock: +10 ms
    detectors = CountingDetectors()
    release = QueryRelease(10, 3, detectors, scan_budget_s=0.035, clock=clock)
    candidates = {
        "web": [candidate("tent", 9, 3), candidate("lamp", 8, 3), candidate("sofa", 7, 3)],
        "app": [candidate("kettle", 5, 3), candidate("drill", 4, 3)]}
    first = release.release(candidates)
    # the deadline is read at 0 ms (+35 ms); then 10, 20, 30 ms: three texts, 40 ms: stop
    assert detectors.read == ["kettle", "tent", "drill"]
    assert first.shown == {"web": [("tent", 9)], "app": [("kettle", 5), ("drill", 4)]}
    assert first.withheld == {"web": {pd.NOT_SCANNED_YET: 2}, "app": {}}
    second = release.release(candidates)  # what was read is remembered; the rest is read now
    assert detectors.read[3:] == ["lamp", "sofa"]
    assert second.shown == {"web": [("tent", 9), ("lamp", 8), ("sofa", 7)],
                            "app": [("kettle", 5), ("drill", 4)]}
    assert second.withheld == {"web": {}, "app": {}}


def test_a_zero_budget_reads_nothing_new_and_withholds_it():
    release = QueryRelease(10, 3, PersonalData(), scan_budget_s=0.0)
    released = release.release({"web": [candidate("tent", 9, 3), candidate("lamp", 2, 1)]})
    assert released.shown == {"web": []}
    assert released.withheld == {"web": {pd.NOT_SCANNED_YET: 1, pd.FEW_CLIENTS: 1}}
