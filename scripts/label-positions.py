#!/usr/bin/env python3
"""Labels positions with another UCI engine's search score, for a Texel fit on its judgement.

    scripts/label-positions.py IN OUT [--engine /usr/games/stockfish] [--depth 8]
        [--every 1] [--jobs 2]

IN is a file of datagen's format (`FEN [result]`, the result White's score: 1.0, 0.5, 0.0), as
`arbiter datagen` writes it; OUT is the bullet format that `arbiter tune texel` reads,
`FEN | score | result`, the score the engine's centipawns from White's side. Positions the
engine scores as a mate, and lines it cannot read, are left out (and counted). `--every N`
keeps every Nth position. The engines run with one thread and 16 MB of hash each, `--jobs` of
them at once; with python-chess (scripts/ci-setup.sh installs it).

Why: staunton's own fits label a position by its game's result and by staunton's search
score, so they learn what staunton already believes. A stronger engine's score says what the
position is worth to a better judge (CHANGELOG, "labels from Stockfish").
"""

import argparse
import multiprocessing
import multiprocessing.util
import sys

import chess
import chess.engine

ENGINE = None
LIMIT = None


def start(engine_path, depth):
    global ENGINE, LIMIT
    ENGINE = chess.engine.SimpleEngine.popen_uci(engine_path)
    ENGINE.configure({"Threads": 1, "Hash": 16})
    LIMIT = chess.engine.Limit(depth=depth)
    # Each worker quits its engine when it exits, so that no engine outlives the run (an
    # engine that does not quit at the end of its input would otherwise stay behind).
    multiprocessing.util.Finalize(ENGINE, ENGINE.quit, exitpriority=10)


def label(line):
    """(output line or None, why it was left out)."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None, "blank"
    if not text.endswith("]") or " [" not in text:
        return None, "unreadable"
    fen, result = text[:-1].rsplit(" [", 1)
    try:
        board = chess.Board(fen)
        float(result)
    except ValueError:
        return None, "unreadable"
    score = ENGINE.analyse(board, LIMIT)["score"].white()
    if score.is_mate():
        return None, "mate"
    return f"{fen} | {score.score()} | {result}", None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--engine", default="/usr/games/stockfish")
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    with open(args.input) as f:
        lines = [l for i, l in enumerate(f) if i % args.every == 0]
    left_out = {}
    written = 0
    with multiprocessing.Pool(args.jobs, start, (args.engine, args.depth)) as pool, open(
        args.output, "w"
    ) as out:
        for i, (text, why) in enumerate(pool.imap(label, lines, chunksize=64), 1):
            if text is None:
                left_out[why] = left_out.get(why, 0) + 1
            else:
                out.write(text + "\n")
                written += 1
            if i % 10000 == 0:
                print(f"{i}/{len(lines)} positions", file=sys.stderr, flush=True)
        pool.close()
        pool.join()
    print(f"{written} positions written to {args.output}; left out: {left_out or 'none'}")


if __name__ == "__main__":
    main()
