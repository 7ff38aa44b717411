"""collector/judgments/gate.py: a gate rule that cannot be parsed names its setting, its source
and what is wrong with it, since a CI gate that silently drops a bad rule would pass anything."""

from __future__ import annotations

import pytest

from collector.config import ConfigError, load_config


@pytest.mark.parametrize(("rule", "message"), [
    ("nDCG@@10", "not a measure ir_measures can parse"),
    ("Bogus@10", "measure not found"),
    ("nDCG@10 margin=-1", "margin must be >= 0"),
    ("nDCG@10 significance=2", "significance must be between 0 and 1"),
    ("nDCG@10 slices=everything", "slice 'everything'"),
    ("nDCG@10 colour=red", "unknown option 'colour'"),
    ("ERR(judged_only=True)@10", "unsupported params found: ['judged_only']"),
])
def test_a_bad_gate_rule_names_the_key(rule, message):
    with pytest.raises(ConfigError) as raised:
        load_config(environ={"SEARCHPULSE_EVALUATE_GATE": rule})
    assert str(raised.value).startswith("evaluate.gate (from SEARCHPULSE_EVALUATE_GATE)")
    assert message in str(raised.value)
