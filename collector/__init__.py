"""searchpulse collector: UBI search events → session-aware search-quality metrics."""

__version__ = "0.1.0"
