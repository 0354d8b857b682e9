#!/usr/bin/env python3
"""An independent oracle for arbiter's labelled positions (crates/tune/src/positions.rs).

Reads the PGN games of a file with python-chess and prints, for each finished game, the
positions arbiter's `Filter` keeps, in arbiter datagen's format `FEN [1.0]`, in game order.
The rules, restated here from the module docs rather than from the Rust code:

- a game's positions are those a move was played from (the start, then after each move but
  the last); games with the result `*` have no label and give none;
- the first --skip-plies plies (default 8) are dropped;
- a position with the side to move in check is dropped;
- a position whose played move is a capture or a promotion is dropped;
- from the first move whose comment starts with a mate score (`+M5/12 ...`, `-M3`, `M2`), that
  position and all later ones of the game are dropped.

With --dedup, each position is printed once, at its first occurrence: positions are the same
when their first four FEN fields are (placement, side to move, castling rights, and the
en-passant square only when a capture there is legal: python-chess's default), which is what
arbiter's Zobrist key compares. That is `arbiter datagen`'s positions file.

Usage: positions-oracle.py GAMES.pgn [--skip-plies N] [--keep-all] [--dedup]
(--keep-all turns off every filter, like `Filter::none()`). Needs `pip install chess`.
"""

import argparse
import re
import sys

import chess
import chess.pgn

MATE = re.compile(r"^\s*[+-]?M\d")
LABELS = {"1-0": "1.0", "1/2-1/2": "0.5", "0-1": "0.0"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn")
    parser.add_argument("--skip-plies", type=int, default=8)
    parser.add_argument("--keep-all", action="store_true")
    parser.add_argument("--dedup", action="store_true")
    args = parser.parse_args()
    skip_plies = 0 if args.keep_all else args.skip_plies
    out = sys.stdout
    seen = set()
    with open(args.pgn, encoding="utf-8-sig") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            if game.errors:
                sys.exit(f"{args.pgn}: {game.errors[0]}")
            label = LABELS.get(game.headers.get("Result", "*"))
            if label is None:
                continue
            board = game.board()
            for ply, node in enumerate(game.mainline()):
                move = node.move
                if not args.keep_all and MATE.match(node.comment or ""):
                    break
                noisy = board.is_capture(move) or move.promotion is not None
                kept = ply >= skip_plies and (
                    args.keep_all or not (board.is_check() or noisy)
                )
                key = " ".join(board.fen().split()[:4])
                if kept and args.dedup and key in seen:
                    kept = False
                if kept:
                    seen.add(key)
                    out.write(f"{board.fen()} [{label}]\n")
                board.push(move)


if __name__ == "__main__":
    main()
