"""``searchpulse clicks``: the position-based click model fitted on the store.
"""
