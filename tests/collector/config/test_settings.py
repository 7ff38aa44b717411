"""collector/config/settings.py: the settings table is consistent as data — one row per key,
each named ``section.name`` with its ``SEARCHPULSE_*`` variable, a default of its declared type
that passes its own check, a help text — the secrets are marked, and every moved key names a
setting that exists, since the loader, `config check` and the docs all read this one table."""

from __future__ import annotations

import re

import pytest

from collector.config.settings import (
    BY_KEY,
    FOREIGN_SECTIONS,
    MOVED,
    SETTINGS,
    Setting,
    describe,
    env_name,
)


def test_one_row_per_key_each_a_section_and_a_name() -> None:
    keys = [setting.key for setting in SETTINGS]
    assert len(keys) == len(set(keys)) == len(BY_KEY) > 100
    assert [key for key in keys if not re.fullmatch(r"[a-z_]+\.[a-z0-9_]+", key)] == []
    assert not any(key.startswith(FOREIGN_SECTIONS) for key in keys)  # alerts/ has its own
    assert describe() == list(SETTINGS)


def test_each_setting_has_its_own_environment_variable() -> None:
    assert env_name("kafka.sasl_password") == "SEARCHPULSE_KAFKA_SASL_PASSWORD"
    assert BY_KEY["top_queries.window_s"].env == "SEARCHPULSE_TOP_QUERIES_WINDOW_S"
    variables = [setting.env for setting in SETTINGS]
    assert len(set(variables)) == len(variables)  # no two keys share a variable


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda setting: setting.key)
def test_a_default_is_of_its_type_passes_its_check_and_is_explained(setting: Setting) -> None:
    assert type(setting.default) is setting.kind
    assert setting.check is None or setting.check(setting.default) is None
    assert setting.help.strip()  # what `config check --help` and the docs show


def test_the_secrets_are_marked() -> None:
    assert {setting.key for setting in SETTINGS if setting.secret} == {"store.url",
                                                                       "kafka.sasl_password"}


def test_a_moved_key_names_a_setting_that_exists() -> None:
    assert MOVED == {
        "alerts.thresholds.control_variant": "experiments.control_variant",
        "alerts.thresholds.guardrail_zero_result_margin":
            "experiments.guardrail_zero_result_margin",
        "alerts.thresholds.guardrail_slow_search_margin":
            "experiments.guardrail_slow_search_margin",
        "alerts.thresholds.min_searches_sample_ratio": "experiments.min_units",
    }
    assert all(new in BY_KEY and old not in BY_KEY for old, new in MOVED.items())
