"""Series: what is counted per label combination (quality counts, strata, experiment units,
judged relevance, examination weights, the zero-result top-K), with capped labels.
"""
