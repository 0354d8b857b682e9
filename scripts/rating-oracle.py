#!/usr/bin/env python3
"""An independent oracle for arbiter's rating lists (crates/stats/src/rating.rs).

Fits the same model with a general-purpose optimizer instead of Newton's method: Bradley-Terry
on the logistic Elo scale, a draw counting half a point, every zero W/D/L count of a pairing
replaced by fishtest's 0.001. The Hessian is taken by finite differences of the
log-likelihood, not from its formula; the interval is the sandwich I^-1 J I^-1 with J the
observed variance of each pairing's points. Run at development time (numpy and scipy are not
dependencies of the project); its output is pasted into crates/stats/tests/rating.rs.

The second list has a sweep (alpha won all its games against bravo), so no finite maximum
exists without a prior: every pairing takes BayesElo's two virtual draws, and the list is
centred on its mean.

    python3 scripts/rating-oracle.py
"""
import math

import numpy as np
from scipy.optimize import minimize
from scipy.stats import norm

ELO_PER_NAT = 400 / math.log(10)
EPS = 1e-3

NAMES = ["anchor", "bravo", "charlie", "delta", "echo"]
# (first, second, wins, draws, losses) from the first's side.
GAMES = [
    (0, 1, 31, 52, 17),
    (0, 2, 40, 45, 15),
    (1, 2, 22, 50, 28),
    (1, 3, 45, 40, 15),
    (2, 3, 30, 60, 10),
    (3, 4, 20, 70, 0),   # a zero count: regularized
    (2, 4, 12, 30, 8),
    (0, 4, 9, 1, 0),     # two zero counts
]
ANCHOR, ANCHOR_ELO = 0, 2800.0

SWEEP_NAMES = ["alpha", "bravo", "charlie", "delta"]
SWEEP_GAMES = [
    (0, 1, 10, 0, 0),    # the sweep
    (1, 2, 12, 10, 8),
    (2, 3, 9, 12, 9),
    (1, 3, 15, 10, 5),
]
VIRTUAL_DRAWS = 2


def regularized(w, d, l):
    return [x if x > 0 else EPS for x in (l, d, w)]  # low score to high


def loglik(free, games):
    theta = np.concatenate([[0.0], free])
    total = 0.0
    for a, b, w, d, l in games:
        counts = regularized(w, d, l)
        n = sum(counts)
        points = counts[1] * 0.5 + counts[2]
        delta = theta[a] - theta[b]
        total += points * -np.logaddexp(0, -delta) + (n - points) * -np.logaddexp(0, delta)
    return total


def fit(names, games, anchor, anchor_elo):
    """anchor None: mean zero."""
    m = len(names)

    def loglik_(x):
        return loglik(x, games)

    res = minimize(lambda x: -loglik_(x), np.zeros(m - 1), method="BFGS",
                   options={"gtol": 1e-11, "maxiter": 10000})
    free = res.x
    # Newton polish with the finite-difference Hessian, in case BFGS stopped early.
    h = 1e-4

    def hessian(x):
        k = len(x)
        hm = np.zeros((k, k))
        for i in range(k):
            for j in range(k):
                ei, ej = np.eye(k)[i] * h, np.eye(k)[j] * h
                hm[i, j] = (loglik_(x + ei + ej) - loglik_(x + ei - ej)
                            - loglik_(x - ei + ej) + loglik_(x - ei - ej)) / (4 * h * h)
        return hm

    def gradient(x):
        return np.array([(loglik_(x + np.eye(len(x))[i] * 1e-6)
                          - loglik_(x - np.eye(len(x))[i] * 1e-6)) / 2e-6 for i in range(len(x))])

    for _ in range(3):
        free = free - np.linalg.solve(hessian(free), gradient(free))
    theta = np.concatenate([[0.0], free])
    info = -hessian(free)
    middle = np.zeros((m, m))
    for a, b, w, d, l in games:
        counts = regularized(w, d, l)
        n = sum(counts)
        e = 1 / (1 + math.exp(-(theta[a] - theta[b])))
        spread = sum(p / n * (x - e) ** 2 for p, x in zip(counts, (0, 0.5, 1)))
        v = n * spread
        middle[a, a] += v
        middle[b, b] += v
        middle[a, b] -= v
        middle[b, a] -= v
    inv = np.linalg.inv(info)
    cov_free = inv @ middle[1:, 1:] @ inv
    cov = np.zeros((m, m))
    cov[1:, 1:] = cov_free
    z = norm.ppf(0.975)
    # The centre: the anchor engine, or the mean.
    weights = np.full(m, 1.0 / m) if anchor is None else np.eye(m)[anchor]
    centre_elo = 0.0 if anchor is None else anchor_elo
    elo = [centre_elo + ELO_PER_NAT * (theta[i] - weights @ theta) for i in range(m)]
    order = sorted(range(m), key=lambda i: -elo[i])
    print("name, elo, half_width, los_next")
    for k, i in enumerate(order):
        c = np.eye(m)[i] - weights
        var = c @ cov @ c
        hw = z * ELO_PER_NAT * math.sqrt(max(var, 0))
        los = ""
        if k + 1 < m:
            j = order[k + 1]
            sd = math.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j])
            los = "%.9f" % norm.cdf((theta[i] - theta[j]) / sd)
        print(f'("{names[i]}", {elo[i]:.6f}, {hw:.6f}, {los or "None"}),')


def main():
    fit(NAMES, GAMES, ANCHOR, ANCHOR_ELO)
    print()
    with_prior = [(a, b, w, d + VIRTUAL_DRAWS, l) for a, b, w, d, l in SWEEP_GAMES]
    fit(SWEEP_NAMES, with_prior, None, 0.0)


if __name__ == "__main__":
    main()
