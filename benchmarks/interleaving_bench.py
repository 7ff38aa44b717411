"""Sensitivity of team-draft interleaving versus an A/B test of CTR, on simulated users with a
known small preference between two rankers (the seeds: interleaving needs "10–100× less traffic").

    python -m benchmarks.interleaving_bench [--queries 2000] [--json FILE]

Users (position-based model): a search of query q shows 10 documents; the document at rank k is
examined with probability θ_k = 1 / k^0.9 and clicked, if examined, with its attractiveness α_d
(each query has 30 candidates, α ~ Beta(0.4, 3.6): mean 0.1); clicks are independent.
Ranker A orders a query's candidates by α plus Gaussian noise of sd 0.35; ranker B by α plus
noise of sd ``noise_b`` < 0.35: B is better, by a margin that ``noise_b`` sets.

* A/B: half of the searches see A, half B; the metric is CTR (a search with a click); the test a
  two-sided two-proportion z-test at 5 %.
* Interleaving: every search sees the team-draft interleaving of A and B (a coin decides which
  team drafts first in each round; a document already drafted is skipped); per search the team
  with more clicks wins, equal clicks tie (searchpulse's rule); the test a two-sided sign test
  of B's wins against A's at 5 %, ties excluded.

Per-search probabilities are exact for A/B (1 − Π (1 − θ_k α_d)) and Monte Carlo for
interleaving (``--draws`` interleavings × click draws per query); the searches needed for 80 %
power follow from the standard sample-size formulas and are then checked by simulating 2,000
experiments of that size (binomial / multinomial draws): the empirical power is reported beside.

**Users, not searches** (the second table): real A/B tests randomise users, and users differ.
Each user makes 1 + Poisson(9) searches (mean 10) and clicks with a propensity s_u
(lognormal, mean 1, log-sd ``sigma``): P(click at k) = θ_k · min(1, s_u α_d). A/B: users split
50/50, CTR compared by the delta method over users (the variance of c_u − CTR · m_u); team-draft
interleaving: every search interleaved, per user d_u = B's wins − A's wins, its mean over users
tested against 0. Both from ``--users`` simulated users per arm and method (Monte Carlo), the
searches needed for 80 % power = users needed × 10.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np

DEPTH, CANDIDATES = 10, 30
THETA = 1.0 / np.arange(1, DEPTH + 1) ** 0.9
Z_ALPHA, Z_BETA = 1.959964, 0.841621  # two-sided 5 %, 80 % power


def rankers(rng: np.random.Generator, queries: int, noise_b: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    alpha = rng.beta(0.4, 3.6, (queries, CANDIDATES))
    a = np.argsort(-(alpha + rng.normal(0, 0.35, alpha.shape)), axis=1)[:, :DEPTH]
    b = np.argsort(-(alpha + rng.normal(0, noise_b, alpha.shape)), axis=1)[:, :DEPTH]
    return alpha, a, b


def ctr(alpha: np.ndarray, ranking: np.ndarray) -> np.ndarray:
    shown = np.take_along_axis(alpha, ranking, axis=1)
    return 1.0 - np.prod(1.0 - THETA * shown, axis=1)


def interleave(rng: np.random.Generator, a: list[int], b: list[int]) -> tuple[list[int], list[int]]:
    """Team-draft interleaving: (documents, team per position: 0 = A, 1 = B)."""
    shown: list[int] = []
    teams: list[int] = []
    picks = [0, 0]
    lists = (a, b)
    while len(shown) < DEPTH:
        order = (0, 1) if rng.random() < 0.5 else (1, 0)
        for team in order:
            ranking = lists[team]
            while picks[team] < len(ranking) and ranking[picks[team]] in shown:
                picks[team] += 1
            if picks[team] < len(ranking) and len(shown) < DEPTH:
                shown.append(ranking[picks[team]])
                teams.append(team)
        if picks[0] >= len(a) and picks[1] >= len(b):
            break
    return shown, teams


def interleaving_outcomes(rng: np.random.Generator, alpha: np.ndarray, a: np.ndarray,
                          b: np.ndarray, draws: int) -> np.ndarray:
    """Per query: P(A wins), P(B wins), P(tie), P(no click)."""
    out = np.zeros((len(alpha), 4))
    for q in range(len(alpha)):
        for _ in range(draws):
            shown, teams = interleave(rng, list(a[q]), list(b[q]))
            p = THETA[:len(shown)] * alpha[q, shown]
            clicks = rng.random((1, len(shown))) < p
            team_clicks = np.array([clicks[0, np.array(teams) == t].sum() for t in (0, 1)])
            if team_clicks.sum() == 0:
                out[q, 3] += 1
            elif team_clicks[0] > team_clicks[1]:
                out[q, 0] += 1
            elif team_clicks[1] > team_clicks[0]:
                out[q, 1] += 1
            else:
                out[q, 2] += 1
    return out / draws


def ab_searches(p_a: float, p_b: float) -> float:
    """Searches (both arms) a two-proportion z-test needs for 80 % power at 5 %."""
    mean = (p_a + p_b) / 2
    per_arm = ((Z_ALPHA * np.sqrt(2 * mean * (1 - mean))
                + Z_BETA * np.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))) / (p_b - p_a)) ** 2
    return 2 * per_arm


def interleaving_searches(win_a: float, win_b: float) -> float:
    """Searches a sign test of B's wins against A's needs for 80 % power at 5 %."""
    decisive = win_a + win_b
    r = win_b / decisive
    needed = ((Z_ALPHA * 0.5 + Z_BETA * np.sqrt(r * (1 - r))) / (r - 0.5)) ** 2
    return needed / decisive


def power_ab(rng: np.random.Generator, p_a: float, p_b: float, n: int, runs: int) -> float:
    half = n // 2
    ca, cb = rng.binomial(half, p_a, runs), rng.binomial(half, p_b, runs)
    pooled = (ca + cb) / (2 * half)
    z = (cb - ca) / half / np.sqrt(pooled * (1 - pooled) * 2 / half)
    return float(np.mean(z > Z_ALPHA))


def power_interleaving(rng: np.random.Generator, probabilities: np.ndarray, n: int,
                       runs: int) -> float:
    counts = rng.multinomial(n, probabilities, runs)
    wins_a, wins_b = counts[:, 0], counts[:, 1]
    decisive = np.maximum(wins_a + wins_b, 1)
    z = (wins_b - decisive / 2) / np.sqrt(decisive / 4)
    return float(np.mean(z > Z_ALPHA))


def user_level(rng: np.random.Generator, alpha: np.ndarray, a: np.ndarray, b: np.ndarray,
               users: int, sigma: float, draws: int = 20) -> dict[str, float]:
    """Searches an A/B test (users randomised) and interleaving (every search) need for 80 %
    power when users differ by a click propensity of log-sd ``sigma`` (module docstring)."""
    queries = len(alpha)
    searches = 1 + rng.poisson(9, users)
    owner = np.repeat(np.arange(users), searches)
    propensity = np.exp(rng.normal(-sigma * sigma / 2, sigma, users))[owner]
    query = rng.integers(0, queries, len(owner))
    shown = {0: a, 1: b}

    def probabilities(documents: np.ndarray) -> np.ndarray:
        return THETA * np.minimum(1.0, propensity[:, None] * alpha[query[:, None], documents])

    def users_needed(per_user: float, mean_effect: float) -> float:
        return (Z_ALPHA + Z_BETA) ** 2 * per_user / mean_effect ** 2

    # A/B: the same users' searches on A and on B (common random numbers): the effect from the
    # exact per-search click probabilities, the per-user variance from one draw of clicks
    arms = []
    for ranker in (0, 1):
        p = probabilities(shown[ranker][query])
        rate = (1 - np.prod(1 - p, axis=1)).sum() / searches.sum()
        c = np.bincount(owner, (rng.random(p.shape) < p).any(axis=1), users)
        arms.append((rate, np.var(c - rate * searches) / searches.mean() ** 2))
    (rate_a, var_a), (rate_b, var_b) = arms
    ab_users = users_needed(var_a + var_b, rate_b - rate_a)  # per arm
    # interleaving: ``draws`` team-draft interleavings per query, one drawn per search
    merged = np.zeros((queries, draws, DEPTH), dtype=np.int64)
    teams = np.zeros((queries, draws, DEPTH), dtype=np.int64)
    for q in range(queries):
        for d in range(draws):
            documents, team = interleave(rng, list(a[q]), list(b[q]))
            merged[q, d], teams[q, d] = documents, team
    pick = rng.integers(0, draws, len(owner))
    p = probabilities(merged[query, pick])
    team = teams[query, pick]

    def outcome() -> np.ndarray:  # per search: +1 B wins, −1 A wins, 0 tie or no click
        clicked = rng.random(p.shape) < p
        return np.sign((clicked & (team == 1)).sum(axis=1) - (clicked & (team == 0)).sum(axis=1))

    # the effect averaged over 20 click draws per search, the variance from one
    effect = np.mean([outcome().sum() for _ in range(20)]) / users
    score = np.bincount(owner, outcome(), users)
    tdi_users = users_needed(float(np.var(score)), effect)  # one group of users
    return {"sigma": sigma, "ctr_a": rate_a, "ctr_b": rate_b,
            "ab_searches_80pct": round(2 * ab_users * searches.mean()),
            "interleaving_searches_80pct": round(tdi_users * searches.mean()),
            "ratio": 2 * ab_users / tdi_users}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--users", type=int, default=40_000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    rows = []
    users = []
    for noise_b in (0.33, 0.30, 0.25):
        alpha, a, b = rankers(rng, args.queries, noise_b)
        p_a, p_b = float(ctr(alpha, a).mean()), float(ctr(alpha, b).mean())
        outcomes = interleaving_outcomes(rng, alpha, a, b, args.draws).mean(axis=0)
        n_ab = ab_searches(p_a, p_b)
        n_tdi = interleaving_searches(outcomes[0], outcomes[1])
        delta = (outcomes[1] + outcomes[2] / 2) / outcomes[:3].sum() - 0.5
        row = {"noise_b": noise_b, "ctr_a": p_a, "ctr_b": p_b,
               "interleaving": {"a_wins": outcomes[0], "b_wins": outcomes[1],
                                "ties": outcomes[2], "no_click": outcomes[3]},
               "delta_ab": -delta, "delta_b": delta,
               "ab_searches_80pct": round(n_ab), "interleaving_searches_80pct": round(n_tdi),
               "ratio": n_ab / n_tdi,
               "ab_power_at_n": power_ab(rng, p_a, p_b, round(n_ab), 2000),
               "interleaving_power_at_n": power_interleaving(rng, outcomes, round(n_tdi), 2000)}
        rows.append(row)
        print(f"B's noise {noise_b}: CTR A {p_a:.4f} B {p_b:.4f} (+{p_b - p_a:.4f}); "
              f"interleaving Δ_B {delta:+.4f}; searches for 80 % power: A/B {n_ab:,.0f}, "
              f"interleaving {n_tdi:,.0f} (× {n_ab / n_tdi:.1f} fewer); empirical power "
              f"{row['ab_power_at_n']:.2f} / {row['interleaving_power_at_n']:.2f}")
        for sigma in (0.0, 1.0, 1.5):
            found = user_level(rng, alpha, a, b, args.users, sigma) | {"noise_b": noise_b}
            users.append(found)
            print(f"  users differ (log-sd {sigma}): CTR A {found['ctr_a']:.4f} B "
                  f"{found['ctr_b']:.4f}; searches for 80 % power: A/B (users randomised) "
                  f"{found['ab_searches_80pct']:,}, interleaving "
                  f"{found['interleaving_searches_80pct']:,} (× {found['ratio']:.1f} fewer)",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"machine": platform.platform(), "queries": args.queries, "draws": args.draws,
             "users": args.users, "rows": rows, "user_level": users}, indent=2,
            default=float) + "\n")


if __name__ == "__main__":
    main()
