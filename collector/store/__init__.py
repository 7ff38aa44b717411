"""The store: per-query aggregates, where they are kept (SQLite, PostgreSQL), when they are
written, and how far a replay into them got.
"""
