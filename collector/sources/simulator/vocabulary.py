"""The queries users type: a Zipf-popular vocabulary of products, modifiers and brands, its
strata, the SKUs of known-item searches, and the queries failing by construction."""

from __future__ import annotations

import random
from bisect import bisect
from itertools import accumulate

_PRODUCTS = ("shoes", "jacket", "laptop", "headphones", "watch", "backpack", "tent", "lamp",
             "desk", "chair", "camera", "kettle", "blender", "sofa", "mattress", "pillow",
             "blanket", "guitar", "bicycle", "helmet", "gloves", "scarf", "sunglasses", "wallet",
             "umbrella", "drill", "hammer", "router", "monitor", "keyboard", "mouse", "speaker",
             "charger", "printer", "toner", "vacuum", "heater", "fan", "mirror", "rug")
MODIFIERS = ("running", "waterproof", "wireless", "leather", "kids", "mens", "womens", "red",
              "black", "white", "cheap", "small", "large", "organic", "portable", "gaming",
              "vintage", "electric", "folding", "outdoor", "winter", "summer", "cotton", "steel",
              "wooden", "smart", "compact", "ergonomic", "quiet", "heavy")
_BRANDS = ("acme", "northwind", "contoso", "fabrikam", "globex", "initech", "umbrella",
           "hooli", "vandelay", "wayne", "stark", "tyrell", "cyberdyne", "soylent", "wonka")


class Vocabulary:
    """Queries with Zipf popularity; their strata follow from cumulative expected share."""

    def __init__(self, rng: random.Random, size: int, exponent: float, head: float = 0.5,
                 torso: float = 0.8) -> None:
        candidates = sorted({*_PRODUCTS, *(f"{m} {p}" for m in MODIFIERS for p in _PRODUCTS),
                             *(f"{b} {p}" for b in _BRANDS for p in _PRODUCTS),
                             *(f"{b} {m} {p}" for b in _BRANDS[:6] for m in MODIFIERS[:12]
                               for p in _PRODUCTS)})
        rng.shuffle(candidates)
        self.queries = candidates[:size]
        weights = [1.0 / (rank + 1) ** exponent for rank in range(len(self.queries))]
        total = sum(weights)
        self.cumulative = list(accumulate(weights))
        self.strata: dict[str, int] = {}
        running = 0.0
        for query, weight in zip(self.queries, weights, strict=True):
            share_before = running / total
            running += weight
            self.strata[query] = 0 if share_before < head else 1 if share_before < torso else 2
        self.skus = [f"{rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{rng.randrange(10**6, 10**7)}"
                     f"-{rng.choice('ABCDEFGHJK')}{rng.randrange(10, 99)}" for _ in range(500)]
        # Failing by construction: some queries always find nothing, some rank badly.
        self.broken = set(rng.sample(self.queries[50:], k=max(1, size // 40)))
        self.poor = set(rng.sample(self.queries[20:], k=max(1, size // 25))) - self.broken

    def draw(self, rng: random.Random) -> str:
        return self.queries[bisect(self.cumulative, rng.random() * self.cumulative[-1])]
