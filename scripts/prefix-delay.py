#!/usr/bin/env python3
"""What judging the SPRT on the verdict's prefix costs against judging every finished pair.

A simulation of `arbiter match` at concurrency C: pairs handed out in schedule order to C slots,
each pair taking two games whose lengths vary (log-normal, sigma 0.35: about 60 to 140 plies),
results drawn from a pentanomial distribution. On the same timeline, the `all` rule decides at
the first finished pair after which the LLR of every finished pair crosses a bound; the `prefix`
rule when the LLR of pairs 0..k-1, all finished, crosses. Printed: the pairs finished when each
rule decides (what the run cost), averaged over many runs.

The LLR is the normalized pentanomial GSPRT in its Gaussian form (fishtest's, without the
small-sample correction): for the pair scores' mean m and variance v over N pairs,
LLR = N (mu1 - mu0) (2 m - mu0 - mu1) / (2 v), mu_i = 1/2 + t_i sqrt(v) with t = nElo / (800 /
ln 10 / sqrt 2). The delay comes from the order pairs finish in, not from the LLR's form.

    python3 scripts/prefix-delay.py [--runs 300] [--seed 1] [--elo1 3]
"""
import argparse
import heapq
import math
import random

SCORES = [0.0, 0.25, 0.5, 0.75, 1.0]
# The pentanomial counts of the README's `arbiter sprt` example (a draw-heavy test, about
# +2.5 nElo): the results are drawn from these frequencies.
PENTA = [398, 4112, 7672, 4336, 430]
ELO0, ELO1, ALPHA, BETA = 0.0, 3.0, 0.05, 0.05
NT = 800 / math.log(10) / math.sqrt(2)


def bounds():
    return math.log(BETA / (1 - ALPHA)), math.log((1 - BETA) / ALPHA)


class Sums:
    def __init__(self):
        self.n = 0
        self.s = 0.0
        self.s2 = 0.0

    def add(self, x):
        self.n += 1
        self.s += x
        self.s2 += x * x

    def llr(self):
        if self.n < 2:
            return 0.0
        m = self.s / self.n
        v = max(self.s2 / self.n - m * m, 1e-9)
        mu0 = 0.5 + ELO0 / NT * math.sqrt(v)
        mu1 = 0.5 + ELO1 / NT * math.sqrt(v)
        return self.n * (mu1 - mu0) * (2 * m - mu0 - mu1) / (2 * v)


def one_run(rng, concurrency, max_pairs=200_000):
    lower, upper = bounds()
    decided = lambda s: not (lower < s.llr() < upper)
    total = sum(PENTA)
    weights = [p / total for p in PENTA]
    # In-flight pairs: (finish time, unit, score); the next unit to hand out.
    flight = []
    handed = 0
    now = 0.0
    for _ in range(concurrency):
        length = rng.lognormvariate(0, 0.35) + rng.lognormvariate(0, 0.35)
        heapq.heappush(flight, (now + length, handed, rng.choices(SCORES, weights)[0]))
        handed += 1
    every, prefix = Sums(), Sums()
    waiting = {}
    finished = 0
    all_at = prefix_at = None
    while flight and (all_at is None or prefix_at is None):
        now, unit, score = heapq.heappop(flight)
        finished += 1
        if all_at is None:
            every.add(score)
            if decided(every):
                all_at = finished
        waiting[unit] = score
        while prefix_at is None and prefix.n in waiting:
            prefix.add(waiting.pop(prefix.n))
            if decided(prefix):
                prefix_at = finished
        if handed < max_pairs:
            length = rng.lognormvariate(0, 0.35) + rng.lognormvariate(0, 0.35)
            heapq.heappush(flight, (now + length, handed, rng.choices(SCORES, weights)[0]))
            handed += 1
    return all_at or finished, prefix_at or finished


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--elo1", type=float, default=ELO1)
    args = parser.parse_args()
    globals()["ELO1"] = args.elo1
    print(f"SPRT nElo [{ELO0}, {ELO1}], alpha = beta = {ALPHA}, pentanomial {PENTA}, "
          f"{args.runs} runs each")
    for concurrency in (2, 8):
        rng = random.Random(args.seed)
        runs = [one_run(rng, concurrency) for _ in range(args.runs)]
        all_mean = sum(a for a, _ in runs) / len(runs)
        prefix_mean = sum(p for _, p in runs) / len(runs)
        extra = [p - a for a, p in runs]
        mean = sum(extra) / len(extra)
        error = math.sqrt(sum((e - mean) ** 2 for e in extra) / (len(extra) - 1) / len(extra))
        extra.sort()
        print(f"concurrency {concurrency:>2}: all {all_mean:8.1f} pairs, prefix {prefix_mean:8.1f} "
              f"pairs: {mean:+.1f} +/- {error:.1f} pairs ({(prefix_mean / all_mean - 1) * 100:+.2f}%), "
              f"median {extra[len(extra) // 2]:+d}, 95th percentile {extra[len(extra) * 95 // 100]:+d}")


if __name__ == "__main__":
    main()
