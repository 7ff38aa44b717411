"""``searchpulse evaluate``: rankings scored against the judgment set, compared, and gated.
"""
