"""collector/sources/simulator/outages.py: a tracking outage drops exactly its application's
events in its window and the truth tallies what it hid, since the engine's broken-tracking
alert and the observable truth are checked against it."""

from __future__ import annotations

import json
from collections import Counter

from collector.sources.simulator import SimulationSpec, Simulator
from collector.sources.simulator.oracle import INFORMATIONAL
from collector.sources.simulator.spec import TrackingOutage
from tests.collector.sources.simulator.sent import decoded, event_ms, is_query


def test_an_outage_drops_exactly_its_applications_events_in_the_window():
    start, end = 5 * 60, 10 * 60
    outage = TrackingOutage.parse("web:5m+5m")
    plain = Simulator(SimulationSpec(seed=6, sessions=3000))
    broken = Simulator(SimulationSpec(seed=6, sessions=3000, tracking_outages=[outage]))
    before, after = list(plain.records()), list(broken.records())
    app_of = {}
    for r in decoded(before):
        if is_query(r):
            app_of[r["client_id"]] = r["application"]
    t0 = plain.spec.start * 1000

    def hidden(raw: bytes) -> bool:
        r = json.loads(raw)
        return ("action_name" in r and app_of.get(r["client_id"]) == "web"
                and start * 1000 <= event_ms(r) - t0 < end * 1000)

    assert after == [raw for raw in before if not hidden(raw)]
    dropped = Counter(json.loads(raw)["action_name"] for raw in before if hidden(raw))
    truth = broken.truth.summary()
    report = truth["tracking_outages"][0]
    redelivered = plain.truth.duplicates - broken.truth.duplicates  # of events not sent
    assert sum(report["hidden_events"].values()) + redelivered == sum(dropped.values())
    assert set(report["hidden_events"]) == set(dropped) == {"add_to_cart", "click",
                                                             "page_exit"}
    assert report["hidden_events"]["click"] > 100 and report["searches_in_window"] > 500
    assert truth["records"] == len(after)
    people = {k: v for k, v in truth.items() if k not in INFORMATIONAL}
    assert people == {**plain.truth.summary(), "records": len(after),
                      **{k: truth[k] for k in ("duplicates", "ignored_records",
                                               "orphan_events")}}
    seen = truth["observable"]["by_application"]
    assert seen["web"]["ctr"] < truth["by_application"]["web"]["ctr"] - 0.05
    assert seen["mobile"] == truth["by_application"]["mobile"]
