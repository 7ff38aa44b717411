"""Privacy: what may leave the system (personal data in query text, check digits) and secrets
out of every message.
"""
