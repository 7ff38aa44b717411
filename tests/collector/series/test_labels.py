from __future__ import annotations

from collector.series.labels import CappedLabel, scrub


def test_cap_folds_new_values_into_other_and_counts_them():
    label = CappedLabel("application", cap=2)
    assert [label.resolve(v) for v in ("web", "app", "web", "kiosk", "tv")] == [
        "web", "app", "web", "other", "other"]
    assert label.folded == 2
    assert label.values() == ["app", "web"]


def test_missing_value_is_none_and_scrubbing_removes_unsafe_text():
    label = CappedLabel("variant", cap=5)
    assert label.resolve(None) == "none"
    assert scrub("B <script>alert(1)</script>") == "B_script_alert_1_/script"
    assert len(scrub("x" * 500)) == 64
    assert scrub("!!!") == "x212121"  # nothing safe: its bytes, never read as missing
    assert (scrub("緑"), scrub("青")) == ("xe7b791", "xe99d92")  # two names, two variants
    assert scrub("") == "none"
    assert label.resolve(7) == "7"
