"""Sessions: searches grouped by session and their outcomes decided (reformulation,
abandonment, clicks, interleaving credit), in event-time order.
"""
