"""Judgments: the judgment set, the readers of every judges' tool's files, SRW's text rules,
and the measures and gate rules settings are checked against. Below both the collector and
feedback: it imports neither the collector's stages above it nor feedback.
"""
