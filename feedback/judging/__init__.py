"""``searchpulse judgments``: what the judges returned brought into one judgment set, and how
well they agree.
"""
