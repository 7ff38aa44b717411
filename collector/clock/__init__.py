"""Event time: the stream's own clock, each client's offset, a record's arrival time, and the
records held until the stream catches up.
"""
