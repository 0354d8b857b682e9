#!/usr/bin/env python3
"""Perft under the marked pawn odds, computed with python-chess (an independent oracle for
crates/rules/tests/marked_pawn.rs): the marked pawn may not promote, and once it is captured
the game is over (no moves follow). Prints `FEN | marked square | depth | count` lines.

    pip install chess && python3 scripts/marked-pawn-oracle.py
"""
import chess

CASES = [
    ("3k4/5P2/8/8/8/8/8/4K3 w - - 0 1", "f7", 4),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", "f2", 3),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "f2", 4),
    ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR b KQkq - 0 3", "f2", 4),
    ("8/2k2P2/8/8/8/8/6p1/4K3 w - - 0 1", "f7", 4),
]


def perft(board, marked, depth):
    if marked is None:
        return 0 if depth else 1
    if depth == 0:
        return 1
    total = 0
    for move in board.legal_moves:
        if move.from_square == marked and move.promotion:
            continue
        if move.from_square == marked:
            after = move.to_square
        elif board.is_capture(move):
            taken = move.to_square
            if board.is_en_passant(move):
                taken = chess.square(chess.square_file(move.to_square),
                                     chess.square_rank(move.from_square))
            after = None if taken == marked else marked
        else:
            after = marked
        board.push(move)
        total += 1 if depth == 1 else (perft(board, after, depth - 1) if after is not None else 0)
        board.pop()
    return total


for fen, square, max_depth in CASES:
    board = chess.Board(fen)
    for depth in range(1, max_depth + 1):
        print(f"{fen} | {square} | {depth} | {perft(board, chess.parse_square(square), depth)}")
