#!/usr/bin/env python3
"""Writes a fishtest SPSA trace for arbiter's replay test (crates/tune/tests/spsa_fishtest_trace.rs).

An independent implementation of fishtest's classic SPSA, written from the formulas of
docs/statistics.md section 10 (fishtest's spsa_workflow.py: set-up, per-request c and R at the
request's iteration, update theta = clip(theta + R*c*result*flip), iteration advanced by the
batch's game pairs). Random flips and batch results come from Python's own generator with a
fixed seed; the test feeds the same flips and results to arbiter and must reach the same theta
after every batch.

    python3 scripts/spsa-fishtest-trace.py > crates/tune/tests/data/fishtest-spsa-trace.json
"""
import json
import random

RAW_PARAMS = """\
KnightValue, 781.0, 500.0, 1000.0, 25.0, 0.0020
BishopMargin, 12.5, -40.0, 60.0, 4.0, 0.0050
Reduction, 0.35, 0.0, 1.0, 0.05, 0.0020
Clipped, 2.0, 0.0, 3.0, 1.5, 0.5
"""
NUM_GAMES = 4000
A_RATIO = 0.1
ALPHA = 0.602
GAMMA = 0.101
BATCH_PAIRS = 8  # fishtest's worker batch, in game pairs


def setup():
    num_iter = NUM_GAMES // 2
    spsa = {
        "A": int(A_RATIO * NUM_GAMES / 2),
        "alpha": ALPHA,
        "gamma": GAMMA,
        "iter": 0,
        "num_iter": num_iter,
        "params": [],
    }
    for line in RAW_PARAMS.strip().split("\n"):
        name, start, lo, hi, c_end, r_end = [x.strip() for x in line.split(",")]
        p = {
            "name": name,
            "start": float(start),
            "min": float(lo),
            "max": float(hi),
            "c_end": float(c_end),
            "r_end": float(r_end),
        }
        p["c"] = p["c_end"] * num_iter ** GAMMA
        p["a_end"] = p["r_end"] * p["c_end"] ** 2
        p["a"] = p["a_end"] * (spsa["A"] + num_iter) ** ALPHA
        p["theta"] = p["start"]
        spsa["params"].append(p)
    return spsa


def main():
    rng = random.Random(20141)
    spsa = setup()
    steps = []
    while spsa["iter"] < spsa["num_iter"]:
        pairs = min(BATCH_PAIRS, spsa["num_iter"] - spsa["iter"])
        # The request: c and R at the current iteration, a flip per parameter.
        k = spsa["iter"] + 1
        request = []
        for p in spsa["params"]:
            c = p["c"] / k ** spsa["gamma"]
            r = p["a"] / (spsa["A"] + k) ** spsa["alpha"] / c ** 2
            request.append((c, r, rng.choice((-1, 1))))
        # The batch's games: 2 per pair, each a win, draw or loss for the "w" side.
        outcomes = [rng.choice((1, 0, 0, -1)) for _ in range(2 * pairs)]
        wins = outcomes.count(1)
        losses = outcomes.count(-1)
        # The update.
        spsa["iter"] += pairs
        result = wins - losses
        for p, (c, r, flip) in zip(spsa["params"], request):
            p["theta"] = min(max(p["theta"] + r * c * result * flip, p["min"]), p["max"])
        steps.append(
            {
                "iteration": k - 1,
                "flips": [flip for (_, _, flip) in request],
                "c": [c for (c, _, _) in request],
                "r": [r for (_, r, _) in request],
                "wins": wins,
                "losses": losses,
                "theta": [p["theta"] for p in spsa["params"]],
            }
        )
    print(
        json.dumps(
            {
                "params": RAW_PARAMS,
                "num_games": NUM_GAMES,
                "a_ratio": A_RATIO,
                "alpha": ALPHA,
                "gamma": GAMMA,
                "batch_pairs": BATCH_PAIRS,
                "steps": steps,
            },
            indent=1,
        )
    )


main()
