"""Ingest: one UBI record's bytes decoded, one outcome per record read, and the records that
could not be used kept with their reason.
"""
