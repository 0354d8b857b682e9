#!/usr/bin/env python3
"""Writes a PGN of random games between engines of known strength, to time `arbiter rate` and
to check that it finds the strengths again.

Each game pairs two different engines at random, colours at random. White's expected score is
the logistic Elo curve of the true difference, 1 / (1 + 10^(-diff/400)); draws take
min(p, 1 - p) of the games (half the games between equals, fewer as the gap grows), wins the
rest of the expected score. So the maximum-likelihood ratings of `arbiter rate` converge to the
true ratings (mean zero here), and with N games their errors are about +/- 800/sqrt(N/engines)
Elo.

The movetext is real: the games of MOVES.pgn (for example an arbiter or cutechess match's
PGN output) are recycled in turn, with their comments and start positions (FEN), and the
result token replaced; without --moves, one built-in game. The other tags are cutechess's.

    python3 scripts/make-rating-pgn.py --games 100000 --seed 1 --moves match.pgn > list.pgn
    arbiter rate list.pgn
"""
import argparse
import math
import random
import re
import sys

# True ratings, mean zero.
ENGINES = [
    ("Alpha", 310.0),
    ("Bravo", 220.0),
    ("Charlie", 150.0),
    ("Delta", 90.0),
    ("Echo", 40.0),
    ("Foxtrot", -20.0),
    ("Golf", -80.0),
    ("Hotel", -150.0),
    ("India", -240.0),
    ("Juliett", -320.0),
]

BUILT_IN = (
    "1. e4 {+0.30/12 0.101s} e5 {-0.28/11 0.098s} 2. Nf3 {+0.35/12 0.102s} d6 {-0.30/11 "
    "0.097s} 3. d4 {+0.41/12 0.103s} Bg4 {-0.52/11 0.099s} 4. dxe5 {+0.66/12 0.101s} Bxf3 "
    "{-0.60/12 0.100s} 5. Qxf3 {+0.70/12 0.102s} dxe5 {-0.71/11 0.098s} 6. Bc4 {+0.88/12 "
    "0.101s} Nf6 {-1.02/11 0.099s} 7. Qb3 {+1.10/13 0.100s} Qe7 {-1.15/12 0.097s} 8. Nc3 "
    "{+1.21/12 0.103s} c6 {-1.40/11 0.101s} 9. Bg5 {+1.55/12 0.100s} b5 {-2.10/11 0.098s} 10. "
    "Nxb5 {+2.35/13 0.102s} cxb5 {-2.80/12 0.099s} 11. Bxb5+ {+3.10/13 0.101s} Nbd7 {-3.40/12 "
    "0.100s} 12. O-O-O {+3.90/13 0.102s} Rd8 {-4.50/12 0.098s} 13. Rxd7 {+5.20/13 0.101s} Rxd7 "
    "{-5.80/12 0.099s} 14. Rd1 {+6.40/13 0.100s} Qe6 {-7.90/12 0.097s} 15. Bxd7+ {+9.10/13 "
    "0.103s} Nxd7 {-12.30/12 0.101s} 16. Qb8+ {+M3/13 0.100s} Nxb8 {-M2/12 0.098s} 17. Rd8# "
    "{+M1/13 0.101s}"
)

RESULT_TOKEN = re.compile(r"\s*(1-0|0-1|1/2-1/2|\*)\s*$")


def movetexts(path):
    """Each game of a PGN file as (FEN tag or None, movetext without its result token)."""
    games, fen, current, in_moves = [], None, [], False

    def flush():
        if current:
            games.append((fen, RESULT_TOKEN.sub("", " ".join(current))))

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stripped = line.strip()
            if stripped.startswith("[") and in_moves:
                flush()
                fen, current, in_moves = None, [], False
            if stripped.startswith("[FEN "):
                fen = stripped[len("[FEN "):].rstrip("]").strip().strip('"')
            if stripped.startswith("[") or not stripped:
                continue
            in_moves = True
            current.append(stripped)
    flush()
    return games


def wrap(text, width=80):
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--moves", help="PGN whose movetexts are recycled")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    texts = movetexts(args.moves) if args.moves else [(None, BUILT_IN)]
    games = [
        ((f'[SetUp "1"]\n[FEN "{fen}"]\n' if fen else ""), wrap(moves)) for fen, moves in texts
    ]
    out = sys.stdout
    for n in range(args.games):
        w, b = rng.sample(range(len(ENGINES)), 2)
        (white, rw), (black, rb) = ENGINES[w], ENGINES[b]
        p = 1 / (1 + 10 ** (-(rw - rb) / 400))
        draw = min(p, 1 - p)
        u = rng.random()
        result = "1-0" if u < p - draw / 2 else "1/2-1/2" if u < p + draw / 2 else "0-1"
        out.write(
            f'[Event "rating list"]\n[Site "?"]\n[Date "2024.01.01"]\n[Round "{n + 1}"]\n'
            f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n'
            f'{games[n % len(games)][0]}[TimeControl "10+0.1"]\n\n'
            f"{games[n % len(games)][1]} {result}\n\n"
        )
    print("true ratings: " + ", ".join(f"{name} {elo:+.0f}" for name, elo in ENGINES),
          file=sys.stderr)


if __name__ == "__main__":
    main()
