"""``SEARCHPULSE_*`` variables that no setting reads: a misspelt override would otherwise be
ignored without a word, so each gets a message naming its closest setting."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from collector.config.settings import ENV_PREFIX, FOREIGN_SECTIONS, MOVED, Setting, env_name

# SEARCHPULSE_* variables that are not settings: the config file, the log level (both read by
# the command line), the test suite's own (SEARCHPULSE_TEST_*).
OTHER_VARIABLES = ("SEARCHPULSE_CONFIG", "SEARCHPULSE_LOG_LEVEL")
OTHER_PREFIXES = ("SEARCHPULSE_TEST_",)


def unknown_variables(environ: Mapping[str, str], table: Mapping[str, Setting]
                      ) -> tuple[str, ...]:
    """A message per SEARCHPULSE_* variable of ``environ`` that no setting of ``table`` reads,
    naming the closest one. Variables of a section other programs read (alerts.*) are theirs
    when ``table`` does not hold that section."""
    known = {s.env for s in table.values()} | set(OTHER_VARIABLES)
    others = OTHER_PREFIXES + tuple(
        env_name(section) for section in FOREIGN_SECTIONS
        if not any(key.startswith(section) for key in table))
    moved = {env_name(old): env_name(new) for old, new in MOVED.items()}
    messages = []
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or name in known or name.startswith(others):
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        hint = (f"replaced by {moved[name]}" if name in moved else
                f"did you mean {close[0]}?" if close else
                "settings are SEARCHPULSE_SECTION_NAME (searchpulse --help lists them)")
        messages.append(f"{name}: no such setting; {hint}")
    return tuple(messages)
