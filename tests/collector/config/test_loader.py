from __future__ import annotations

import pytest

from collector.config import ConfigError, load_config


def test_defaults_file_env_and_overrides_layer_in_that_order(tmp_path):
    path = tmp_path / "searchpulse.toml"
    path.write_text("[windows]\nabandonment_s = 600\nreformulation_s = 200\n")
    config = load_config(path, environ={"SEARCHPULSE_WINDOWS_ABANDONMENT_S": "900"},
                         overrides={"windows.reformulation_s": 100})
    assert config["windows.abandonment_s"] == 900.0
    assert config["windows.reformulation_s"] == 100.0
    assert config["windows.attribution_s"] == 1800.0
    assert config.sources["windows.abandonment_s"] == "SEARCHPULSE_WINDOWS_ABANDONMENT_S"
    assert config.sources["windows.reformulation_s"] == "command line"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"environ": {"SEARCHPULSE_LABELS_APPLICATION_CAP": "many"}},
     r"labels.application_cap \(from SEARCHPULSE_LABELS_APPLICATION_CAP\): expected int"),
    ({"overrides": {"labels.variant_cap": 0}}, r"labels.variant_cap .*must be a finite number > 0"),
    ({"environ": {"SEARCHPULSE_ORDERING_IDLE_S": "inf"}},
     r"ordering.idle_s \(from SEARCHPULSE_ORDERING_IDLE_S\): must be a finite number > 0"),
    ({"overrides": {"windows.reformulation_s": 400}}, r"windows.reformulation_s .*must not exceed"),
    ({"overrides": {"strata.head_share": 0.9}}, r"strata.head_share .*below strata.torso_share"),
    ({"overrides": {"intents.keystroke_gap_s": 400}}, r"intents.keystroke_gap_s .*must not exceed"),
    ({"overrides": {"automated.window_s": 9000}}, r"automated.window_s .*must not exceed"),
    ({"overrides": {"automated.client_patterns": ["(unclosed"]}}, r"automated.client_patterns"),
    ({"overrides": {"events.position_base": 2}}, r"events.position_base .*must be 0 or 1"),
    ({"overrides": {"strata.file": "/nonexistent.csv"}}, r"strata.file .*no such file"),
    ({"overrides": {"store.spill_dir": "/nonexistent/spill"}},
     r"store.spill_dir \(from command line\): no such directory"),
    ({"overrides": {"store.max_waiting_rows": 0}}, r"store.max_waiting_rows .*> 0"),
    ({"overrides": {"window.abandon": 1}}, r"window.abandon \(from command line\): unknown"),
])
def test_errors_name_the_offending_key(kwargs, message):
    kwargs.setdefault("environ", {})
    with pytest.raises(ConfigError, match=message):
        load_config(**kwargs)


def test_unknown_key_in_file_and_bad_toml(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[windows]\nabandon = 3\n")
    with pytest.raises(ConfigError, match=r"windows.abandon \(from .*bad.toml\): unknown"):
        load_config(path, environ={})
    path.write_text("[windows\n")
    with pytest.raises(ConfigError, match="bad.toml"):
        load_config(path, environ={})
