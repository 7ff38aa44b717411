"""The deployment's selector is checked with PromQL's grammar of a matcher list: what a
Prometheus selector between braces takes is accepted, anything that would break the rules or
add PromQL of its own to them is refused, where it goes wrong."""

from __future__ import annotations

import pytest

from alerts.config import Deployment, Profile
from alerts.selector import problem
from collector.errors import ConfigError

VALID = ['job="searchpulse"', 'job="a",instance=~"h.*"', ' job = "a" , env != "dev" ',
         "job='a\\'b'", 'job=`raw "text"`', 'job!~"x|y"', 'job="\\u00e9\\x41\\101\\n"',
         '_x1=""']
INVALID = {
    "}{": "expected a label name at offset 0",
    'job="a"} or vector(1) or {x="': "expected ',' or the end at offset 7",
    "": "empty",
    "   ": "empty",
    'job="a",': "a trailing ',' at offset 7",
    'job="a",,x="b"': "expected a label name at offset 8",
    "job": "expected one of = != =~ !~ after 'job' at offset 3",
    'job~"a"': "expected one of = != =~ !~",
    "job=a": "the value of 'job' (from offset 3) is not one quoted string",
    'job="a': "is not one quoted string",
    'job="a\\"': "is not one quoted string",  # the closing quote escaped
    'job="a\\q"': "is not one quoted string",  # no such escape
    'job="a\nb"': "is not one quoted string",
    '1job="a"': "expected a label name at offset 0",
    'job="a" x="b"': "expected ',' or the end at offset 8",
    'job="a"[5m]': "expected ',' or the end at offset 7",
}


@pytest.mark.parametrize("selector", VALID)
def test_a_matcher_list_is_accepted(selector):
    assert problem(selector) is None
    Profile(deployment=Deployment(selector=selector))  # and the profile takes it


@pytest.mark.parametrize(("selector", "why"), INVALID.items())
def test_anything_else_is_refused_saying_where(selector, why):
    found = problem(selector)
    assert found is not None and why in found, found
    with pytest.raises(ConfigError, match=r"^alerts\.deployment\.selector \(generate "
                                          r"--selector\): not a list of Prometheus label"):
        Profile(deployment=Deployment(selector=selector))
