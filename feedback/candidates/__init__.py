"""``searchpulse feedback``: the period's failing queries from the store → candidates, pools
and the files the judges' tools import, and the report.
"""
