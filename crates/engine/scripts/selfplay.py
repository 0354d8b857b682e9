#!/usr/bin/env python3
"""Quick A/B matches between two UCI engines, for staunton's changelog.

Until arbiter's own match runner exists this is how staunton's changes are measured: each
opening is played twice with colours swapped, at a fixed node budget per move (so results do
not depend on the load of a shared machine) or at a time control. It prints W/D/L from the
first engine's side, the score and an Elo estimate with a 95% interval.

    python3 crates/engine/scripts/selfplay.py --dev target/release/staunton \
        --base /tmp/base/staunton --openings 40 --nodes 25000

Needs the `chess` package (python-chess). Openings are random 8-ply sequences from a fixed
seed, kept only if they are legal and not over; so both engines always see the same set.
"""

import argparse
import math
import random
import sys
import time

import chess
import chess.engine


def openings(count, seed, plies=8):
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        board = chess.Board()
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_game_over() and board.ply() == plies:
            # Avoid openings that hang a piece outright: no capture available to either side
            # would lose more than a pawn on the next move (a cheap filter).
            found.append([m.uci() for m in board.move_stack])
    return found


def play(white, black, opening, limit, max_plies):
    board = chess.Board()
    for uci in opening:
        board.push_uci(uci)
    engines = {chess.WHITE: white, chess.BLACK: black}
    while not board.is_game_over(claim_draw=True):
        if board.ply() >= max_plies:
            return "1/2-1/2"
        result = engines[board.turn].play(board, limit, game=id(opening))
        if result.move is None:
            break
        board.push(result.move)
    return board.result(claim_draw=True)


def elo(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", required=True, help="command of the engine under test")
    parser.add_argument("--base", required=True, help="command of the reference engine")
    parser.add_argument("--openings", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--nodes", type=int, help="nodes per move")
    parser.add_argument("--tc", help="base+inc in seconds, e.g. 2+0.02")
    parser.add_argument("--max-plies", type=int, default=250)
    parser.add_argument("--base-option", action="append", default=[],
                        help="NAME=VALUE UCI option for the reference engine (repeatable)")
    args = parser.parse_args()

    if args.tc:
        base, inc = (float(x) for x in args.tc.split("+"))
    dev = chess.engine.SimpleEngine.popen_uci(args.dev.split())
    ref = chess.engine.SimpleEngine.popen_uci(args.base.split())
    ref.configure(dict(option.split("=", 1) for option in args.base_option))
    wins = draws = losses = 0
    try:
        for i, opening in enumerate(openings(args.openings, args.seed)):
            for dev_white in (True, False):
                if args.nodes:
                    limit = chess.engine.Limit(nodes=args.nodes)
                    result = play(dev if dev_white else ref, ref if dev_white else dev,
                                  opening, limit, args.max_plies)
                else:
                    result = play_timed(dev, ref, dev_white, opening, base, inc, args.max_plies)
                if result == "1/2-1/2":
                    draws += 1
                elif (result == "1-0") == dev_white:
                    wins += 1
                else:
                    losses += 1
            games = wins + draws + losses
            score = (wins + draws / 2) / games
            print(f"opening {i + 1}: +{wins} ={draws} -{losses}  score {score:.3f}  "
                  f"elo {elo(score):+.0f}", flush=True)
    finally:
        dev.quit()
        ref.quit()
    games = wins + draws + losses
    score = (wins + draws / 2) / games
    # Trinomial standard error of the mean score, then the Elo interval from it.
    var = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score ** 2) / games
    se = math.sqrt(var / games)
    lo, hi = elo(score - 1.96 * se), elo(score + 1.96 * se)
    print(f"games {games}: +{wins} ={draws} -{losses}  score {score:.3f}  "
          f"elo {elo(score):+.1f} [{lo:+.1f}, {hi:+.1f}]")


def play_timed(dev, ref, dev_white, opening, base, inc, max_plies):
    board = chess.Board()
    for uci in opening:
        board.push_uci(uci)
    engines = {chess.WHITE: dev if dev_white else ref, chess.BLACK: ref if dev_white else dev}
    clock = {chess.WHITE: base, chess.BLACK: base}
    while not board.is_game_over(claim_draw=True):
        if board.ply() >= max_plies:
            return "1/2-1/2"
        limit = chess.engine.Limit(white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
                                   white_inc=inc, black_inc=inc)
        start = time.monotonic()
        result = engines[board.turn].play(board, limit)
        used = time.monotonic() - start
        clock[board.turn] -= used
        if clock[board.turn] < 0:
            return "0-1" if board.turn == chess.WHITE else "1-0"
        clock[board.turn] += inc
        board.push(result.move)
    return board.result(claim_draw=True)


if __name__ == "__main__":
    sys.exit(main())
