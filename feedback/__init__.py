"""The feedback job: failing queries from per-query aggregates → candidates for the next human
judgment set (stratified, pooled, PII-safe). Entry point: ``searchpulse feedback``."""
