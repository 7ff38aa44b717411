"""``searchpulse experiments``: the verdict of every experiment, at the unit of randomization.
"""
