"""collector/sources/simulator/bots.py: crawlers, monitors and load-test fleets search at their
rates, never send an event, and leave every human record and the human truth as they were,
since the engine's automated-traffic detection is measured against them."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest

from collector.outcomes import normalize_query
from collector.sources.simulator import SimulationSpec, Simulator
from collector.sources.simulator.oracle import INFORMATIONAL
from collector.sources.simulator.spec import Bot
from tests.collector.sources.simulator.sent import decoded, is_query

BOTS = [Bot.parse("crawler@web:25/m:0+1h"), Bot.parse("monitor@web:1/m:0+1h"),
        Bot.parse("fleet@mobile:25x4/m:10m+30m"),
        Bot.parse("monitor@opensearch:2/m:0+1h:id=synthetic-uptime-eu1")]


@pytest.fixture(scope="module")
def bots():
    plain = Simulator(SimulationSpec(seed=5, sessions=600))
    with_bots = Simulator(SimulationSpec(seed=5, sessions=600, bots=BOTS))
    before, records = list(plain.records()), list(with_bots.records())
    humans = {json.loads(raw)["client_id"] for raw in before}
    by_client = defaultdict(list)
    for r in decoded(records):
        if r["client_id"] not in humans:
            by_client[r["client_id"]].append(r)
    return before, records, plain.truth.summary(), with_bots.truth.summary(), by_client


def test_bots_search_at_their_rates_and_never_send_an_event(bots):
    _, _, plain, truth, by_client = bots
    sent = [r for records in by_client.values() for r in records]
    assert all(is_query(r) for r in sent)
    assert len(by_client) == 1 + 1 + 25 + 1
    crawler = max(by_client.values(), key=len)
    assert 1440 <= len(crawler) <= 1560  # 25 a minute for an hour
    assert len({normalize_query(r["user_query"]) for r in crawler}) > 0.95 * len(crawler)
    monitor = [v for v in by_client.values() if len(v) in (60, 61)]  # a minute ± 2 %, 1 h
    assert len(monitor) == 1 and len({r["user_query"] for r in monitor[0]}) <= 3
    declared = by_client["synthetic-uptime-eu1"]
    assert 120 <= len(declared) <= 121 and len({r["user_query"] for r in declared}) <= 3
    fleet = [v for v in by_client.values() if v[0]["application"] == "mobile"]
    assert len(fleet) == 25 and 2940 <= sum(map(len, fleet)) <= 3060  # 4 a minute, 30 min
    assert all(re.fullmatch(r"c-[0-9a-f]{12}", c) for c in by_client
               if c != "synthetic-uptime-eu1")  # shaped like people's ids
    assert truth["automated_by_kind"]["crawler"] == len(crawler)  # none a keystroke
    keystrokes = truth["keystroke_records"] - plain["keystroke_records"]
    assert truth["automated_searches"] + keystrokes == len(sent) and keystrokes == 0


def test_bots_leave_every_human_record_and_the_human_truth_as_they_were(bots):
    before, records, plain, truth, by_client = bots
    assert [raw for raw in records if json.loads(raw)["client_id"] not in by_client] == before
    assert truth["records"] == len(records)
    people = {k: v for k, v in truth.items() if k not in INFORMATIONAL}
    shape = ("automated_searches", "automated_share", "records")
    assert {k: v for k, v in people.items() if k not in shape + ("by_application",)} == \
        {k: v for k, v in plain.items() if k not in shape + ("by_application",)}
    automated = len(records) - len(before)  # every bot record an automated search here
    assert people["automated_searches"] == automated
    assert people["automated_share"] == automated / (automated + plain["searches"])


def test_a_crawler_walks_the_tail_and_the_queries_that_fail(bots):
    _, _, plain, _, by_client = bots
    crawler = max(by_client.values(), key=len)
    zero = sum(r["query_response_hit_ids"] == [] for r in crawler) / len(crawler)
    assert zero > plain["zero_result_rate"] + 0.03  # made-up and broken queries fail
