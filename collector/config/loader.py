"""Loading: defaults < TOML file < ``SEARCHPULSE_*`` env < flags, each value coerced to its
setting's type and checked, naming the key and the layer it came from; the result a read-only
``Config``."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

from collector.config.consistency import check_consistency
from collector.config.environment import unknown_variables
from collector.config.settings import BY_KEY, FOREIGN_SECTIONS, MOVED, SETTINGS, Setting
from collector.errors import ConfigError
from collector.privacy.redaction import redact
from collector.text_files import not_text


class Config(Mapping[str, Any]):
    """Validated, read-only settings; ``config["windows.abandonment_s"]`` or ``config.sources``."""

    def __init__(self, values: dict[str, Any], sources: dict[str, str],
                 settings: Mapping[str, Setting] | None = None,
                 unknown_environment: tuple[str, ...] = ()) -> None:
        self._values = values
        self.sources = sources
        self._settings = BY_KEY if settings is None else settings
        # SEARCHPULSE_* variables that name no setting, each with its close match: a misspelt
        # override would otherwise be ignored without a word
        self.unknown_environment = unknown_environment

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def printable(self, key: str) -> Any:
        """The value, or ``***`` for a secret that is set."""
        secret = self._settings[key].secret
        return "***" if secret and self._values[key] else self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def _as_list(raw: Any, where: str) -> list[str]:
    """A list of strings; the environment writes one as comma-separated text."""
    if isinstance(raw, str):
        return [part for part in raw.split(",") if part]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(f"{where}: expected a list of strings, got {raw!r}")
    return list(raw)


_BOOLEAN_WORDS = {"1": True, "true": True, "0": False, "false": False}


def _as_bool(raw: Any) -> bool:
    """A TOML boolean, or one of the words an environment variable can carry."""
    if isinstance(raw, bool):
        return raw
    return _BOOLEAN_WORDS[str(raw).lower()]


def _as_number(kind: type, raw: Any) -> Any:
    """``kind(raw)``, refusing what Python would accept but a reader would not mean: ``true`` as
    1 (bool is an int), and 2.5 silently cut to an int 2."""
    if isinstance(raw, bool):
        raise ValueError(raw)
    if kind is int and isinstance(raw, float) and not raw.is_integer():
        raise ValueError(raw)
    return kind(raw)


def _coerce(setting: Setting, raw: Any, source: str) -> Any:
    """The value of ``raw`` as ``setting.kind``, or a ConfigError naming the key and its source."""
    where = f"{setting.key} (from {source})"
    try:
        if setting.kind is list:
            return _as_list(raw, where)
        if setting.kind is bool:
            return _as_bool(raw)
        if setting.kind in (int, float):
            return _as_number(setting.kind, raw)
        return setting.kind(raw)
    except ConfigError:  # a ValueError, but already naming the key
        raise
    except (KeyError, TypeError, ValueError):
        raise ConfigError(
            f"{where}: expected {setting.kind.__name__}, got {raw!r}"
        ) from None


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, key + "."))
        else:
            flat[key] = value
    return flat


def _file_layer(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The TOML file's settings as dotted keys; an unreadable or malformed file names itself."""
    try:
        with open(path, "rb") as handle:
            return _flatten(tomllib.load(handle))
    except OSError as exc:
        raise ConfigError(f"config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path}: {not_text(path, exc)}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: {exc}") from None


def _layers(path: str | os.PathLike[str] | None, overrides: Mapping[str, Any] | None,
            environ: Mapping[str, str], table: Mapping[str, Setting]
            ) -> list[tuple[str, Mapping[str, Any]]]:
    """(source, settings) from the weakest to the strongest: file, environment, command line."""
    layers: list[tuple[str, Mapping[str, Any]]] = []
    if path:
        layers.append((str(path), _file_layer(path)))
    layers.append(("environment", {
        s.key: environ[s.env] for s in table.values() if s.env in environ
    }))
    if overrides:
        layers.append(("command line", {k: v for k, v in overrides.items() if v is not None}))
    return layers


def _apply_layer(source: str, layer: Mapping[str, Any], from_file: bool,
                 table: Mapping[str, Setting], values: dict[str, Any],
                 sources: dict[str, str]) -> None:
    """Coerce each setting of ``layer`` over ``values``, recording where it came from; an unknown
    key is an error (with its replacement when it moved), except a section another program
    reads from the same file."""
    for key, raw in layer.items():
        setting = table.get(key)
        if setting is None and from_file and key.startswith(FOREIGN_SECTIONS):
            continue
        if setting is None:
            moved = f"; replaced by {MOVED[key]}" if key in MOVED else ""
            raise ConfigError(f"{key} (from {source}): unknown setting{moved}")
        label = setting.env if source == "environment" else source
        values[key] = _coerce(setting, raw, label)
        sources[key] = label


def _check_values(table: Mapping[str, Setting], values: dict[str, Any],
                  sources: dict[str, str]) -> None:
    """Each setting's own check, on the merged value; a secret is shown redacted."""
    for key, setting in table.items():
        problem = setting.check(values[key]) if setting.check else None
        if problem:
            shown = redact(str(values[key])) if setting.secret else values[key]
            raise ConfigError(f"{key} (from {sources[key]}): {problem}, got {shown!r}")


def load_config(
    path: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    extra: tuple[Setting, ...] = (),
) -> Config:
    """Merge defaults, the TOML file, the environment and explicit overrides; validate all."""
    environ = os.environ if environ is None else environ
    table = {s.key: s for s in (*SETTINGS, *extra)}
    values = {key: s.default for key, s in table.items()}
    sources = dict.fromkeys(table, "default")
    for source, layer in _layers(path, overrides, environ, table):
        _apply_layer(source, layer, bool(path) and source == str(path), table, values, sources)
    _check_values(table, values, sources)
    check_consistency(values, sources)
    return Config(values, sources, table, unknown_variables(environ, table))
