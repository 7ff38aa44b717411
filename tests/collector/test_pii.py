from __future__ import annotations

import pytest

from collector.pii import PiiScrubber, luhn_valid
from collector.zero_result_queries import TopZeroResultQueries


@pytest.mark.parametrize(("text", "scrubbed"), [
    ("order for jane.doe+shop@example.co.uk", "order for <email>"),
    ("call +44 20 7946 0958 now", "call <phone> now"),
    ("(555) 123-4567", "<phone>"),
    ("4111 1111 1111 1111", "<card>"),  # Luhn-valid, 16 digits
    ("customer 1234567890123456789", "customer <id>"),  # 19 digits, not Luhn-valid
    ("4006381333931", "4006381333931"),  # EAN-13 is a product, not personal data
    ("978-3-16-148410-0", "978-3-16-148410-0"),  # ISBN
    ("wh-1000xm4 headphones", "wh-1000xm4 headphones"),
])
def test_scrub(text, scrubbed):
    assert PiiScrubber().scrub(text) == scrubbed


def test_luhn_and_extra_patterns_and_length_cap():
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    scrubber = PiiScrubber([r"\bcust-\d+\b"])
    assert scrubber.contains_pii("invoice cust-991")
    assert not scrubber.contains_pii("running shoes")
    assert len(scrubber.label("x" * 200)) == 64


def test_top_zero_result_queries_window_k_and_scrubbing():
    top = TopZeroResultQueries(k=2, window_s=600, slots=10)
    for query, times in (("tent", 5), ("lamp", 3), ("desk", 1), ("mail a@b.com", 4)):
        for i in range(times):
            top.add("web", query, 1000.0 + i)
    top.add("app", "rug", 1000.0)
    assert top.top(now=1010.0) == {"web": [("tent", 5), ("mail <email>", 4)], "app": [("rug", 1)]}
    top.add("web", "lamp", 1700.0)  # 700 s later: the first slots left the window
    assert top.top(now=1700.0) == {"web": [("lamp", 1)]}
