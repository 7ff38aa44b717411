"""Settings: one declarative table, read from defaults < TOML file < ``SEARCHPULSE_*`` env < flags.

Every setting has a dotted key (``windows.abandonment_s``). Its environment variable is the key
upper-cased with dots as underscores (``SEARCHPULSE_WINDOWS_ABANDONMENT_S``). Errors always name the
offending key and where its value came from, so a bad deploy fails at start with a useful message.

One module per job: ``settings`` (the table as rows of data), ``value_checks`` (one value's
checks), ``loader`` (the layers merged, coerced and checked into a ``Config``), ``environment``
(variables no setting reads) and ``consistency`` (checks across settings).
"""

from collector.config.environment import unknown_variables
from collector.config.loader import Config, load_config
from collector.config.settings import ENV_PREFIX, SETTINGS, Setting, describe, env_name
from collector.errors import ConfigError

__all__ = ["ENV_PREFIX", "SETTINGS", "Config", "ConfigError", "Setting", "describe", "env_name",
           "load_config", "unknown_variables"]
