//! The library API as the match runner uses it: determinism, independence of instances,
//! parameters reaching the evaluation, colour symmetry, limits and game history.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use arbiter_rules::uci::parse_uci_move;
use arbiter_rules::{Game, Position};
use staunton::{Engine, Limits, Params, Score, SearchResult};

fn search(engine: &mut Engine, history: &[Position], limits: &Limits) -> SearchResult {
    let stop = AtomicBool::new(false);
    engine.search(history, limits, &stop, &mut |_| {})
}

fn fen(f: &str) -> Position {
    Position::from_fen(f).unwrap()
}

#[test]
fn depth_and_node_searches_repeat_exactly_after_new_game() {
    let pos = fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    for limits in [Limits::depth(8), Limits::nodes(30_000)] {
        let mut engine = Engine::new(Params::default(), 8);
        let first = search(&mut engine, &[pos], &limits);
        // Searching again without a new game may differ (the table remembers)...
        let _ = search(&mut engine, &[pos], &limits);
        // ...but after one, the search is the same move, score, depth and node count.
        engine.new_game();
        let again = search(&mut engine, &[pos], &limits);
        assert_eq!(
            (
                first.best_move,
                first.score,
                first.depth,
                first.nodes,
                &first.pv
            ),
            (
                again.best_move,
                again.score,
                again.depth,
                again.nodes,
                &again.pv
            )
        );
        // A fresh instance agrees too: nothing is shared between engines.
        let mut other = Engine::new(Params::default(), 8);
        let fresh = search(&mut other, &[pos], &limits);
        assert_eq!(
            (first.best_move, first.nodes),
            (fresh.best_move, fresh.nodes)
        );
    }
}

/// The correction history (off by default) reaches the search when switched on, and
/// `new_game` forgets what it learned, so depth searches stay repeatable with it.
#[test]
fn correction_history_changes_the_tree_and_is_forgotten_by_new_game() {
    let pos = fen("r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16");
    let limits = Limits::depth(9);
    let mut plain = Engine::new(Params::default(), 8);
    let off = search(&mut plain, &[pos], &limits);
    let params = Params {
        corr_hist_percent: 100,
        ..Params::default()
    };
    let mut corrected = Engine::new(params, 8);
    let on = search(&mut corrected, &[pos], &limits);
    assert_ne!(
        off.nodes, on.nodes,
        "the corrected evaluation prunes differently"
    );
    assert!(pos.legal_moves().contains(&on.best_move.unwrap()));
    // A second search learns more; after a new game the first search is repeated exactly,
    // which it would not be if the table kept what the two searches learned.
    let _ = search(&mut corrected, &[pos], &limits);
    corrected.new_game();
    let again = search(&mut corrected, &[pos], &limits);
    assert_eq!(
        (on.best_move, on.score, on.nodes, &on.pv),
        (again.best_move, again.score, again.nodes, &again.pv)
    );
}

/// Singular extensions (off by default) reach the search when switched on: the hash moves
/// they extend and the nodes they cut by multi-cut change the tree, the answer stays a legal
/// move with a line of legal moves, and depth searches stay repeatable after `new_game`.
#[test]
fn singular_extensions_change_the_tree_and_repeat_exactly() {
    let pos = fen("r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16");
    let limits = Limits::depth(10);
    let off = search(&mut Engine::new(Params::default(), 8), &[pos], &limits);
    let params = Params {
        se_depth: 6,
        ..Params::default()
    };
    let mut singular = Engine::new(params, 8);
    let on = search(&mut singular, &[pos], &limits);
    assert_ne!(off.nodes, on.nodes, "singular extensions change the tree");
    let mut line = pos;
    for &mv in &on.pv {
        assert!(line.legal_moves().contains(&mv), "{mv:?} in {}", line.fen());
        line.play_unchecked(mv);
    }
    assert_eq!(on.pv.first().copied(), on.best_move);
    singular.new_game();
    let again = search(&mut singular, &[pos], &limits);
    assert_eq!(
        (on.best_move, on.score, on.nodes, &on.pv),
        (again.best_move, again.score, again.nodes, &again.pv)
    );
}

#[test]
fn node_limit_is_respected_exactly() {
    let mut engine = Engine::new(Params::default(), 1);
    let result = search(&mut engine, &[Position::starting()], &Limits::nodes(5_000));
    assert!(result.nodes <= 5_000, "{}", result.nodes);
    assert!(result.depth >= 3);
    // Even the first iteration stops, once the first root move has a score; that move is
    // played (a search is never without a move).
    let kiwipete = fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    engine.new_game();
    let stop = AtomicBool::new(false);
    let mut reports = 0;
    let result = engine.search(&[kiwipete], &Limits::nodes(1), &stop, &mut |info| {
        reports += 1;
        assert_eq!(info.depth, 1);
    });
    assert_eq!(reports, 1, "the stopped first iteration is reported too");
    let mv = result.best_move.expect("a move");
    assert!(kiwipete.legal_moves().contains(&mv));
    assert!(result.nodes < 100, "{}", result.nodes);
    assert_eq!(result.depth, 1);
}

#[test]
fn many_instances_search_at_once_independently() {
    let positions = [
        Position::starting(),
        fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
        fen("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"),
        fen("4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19"),
    ];
    let limits = Limits::depth(7);
    let alone: Vec<SearchResult> = positions
        .iter()
        .map(|p| search(&mut Engine::new(Params::default(), 0), &[*p], &limits))
        .collect();
    let together: Vec<SearchResult> = std::thread::scope(|scope| {
        let handles: Vec<_> = positions
            .iter()
            .map(|p| {
                let limits = &limits;
                scope.spawn(move || search(&mut Engine::new(Params::default(), 0), &[*p], limits))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (a, b) in alone.iter().zip(&together) {
        assert_eq!(
            (a.best_move, a.score, a.nodes),
            (b.best_move, b.score, b.nodes)
        );
    }
}

#[test]
fn piece_values_reach_the_evaluation() {
    // White has an extra knight; moving both halves of the knight's value moves the
    // evaluation by exactly that much, whatever the game phase.
    let pos = fen("4k3/pppppppp/8/8/8/8/PPPPPPPP/1N2K3 w - - 0 1");
    let mut engine = Engine::new(Params::default(), 1);
    let before = engine.evaluate(&pos);
    let mut params = Params::default();
    params.knight_mg += 75;
    params.knight_eg += 75;
    engine.set_params(params.clone());
    assert_eq!(engine.params(), &params);
    assert_eq!(engine.evaluate(&pos) - before, 75);
    // Seen from the other side, the same change counts against the side to move.
    let black = fen("4k3/pppppppp/8/8/8/8/PPPPPPPP/1N2K3 b - - 0 1");
    let with_default = Engine::new(Params::default(), 1).evaluate(&black);
    assert_eq!(engine.evaluate(&black) - with_default, -75);
}

/// The same position with colours swapped and the board flipped, side to move swapped.
fn mirror(pos: &Position) -> Position {
    let fen = pos.fen();
    let fields: Vec<&str> = fen.split(' ').collect();
    let swap_case = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect::<String>()
    };
    let board = fields[0]
        .split('/')
        .rev()
        .map(swap_case)
        .collect::<Vec<_>>()
        .join("/");
    let turn = if fields[1] == "w" { "b" } else { "w" };
    let castling = if fields[2] == "-" {
        "-".to_owned()
    } else {
        let swapped = swap_case(fields[2]);
        "KQkq".chars().filter(|c| swapped.contains(*c)).collect()
    };
    let ep = match fields[3] {
        "-" => "-".to_owned(),
        sq => {
            let (file, rank) = sq.split_at(1);
            format!("{file}{}", if rank == "3" { "6" } else { "3" })
        }
    };
    Position::from_fen(&format!(
        "{board} {turn} {castling} {ep} {} {}",
        fields[4], fields[5]
    ))
    .unwrap_or_else(|e| panic!("mirror of {fen}: {e}"))
}

#[test]
fn evaluation_is_colour_symmetric() {
    let engine = Engine::new(Params::default(), 0);
    // Random games from the start, looked at after every move: thousands of positions of
    // every phase.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut checked = 0;
    for _game in 0..40 {
        let mut pos = Position::starting();
        for _ply in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mirrored = mirror(&pos);
            assert_eq!(mirror(&mirrored), pos);
            assert_eq!(
                engine.evaluate(&pos),
                engine.evaluate(&mirrored),
                "{pos} vs {mirrored}"
            );
            checked += 1;
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            pos.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
        }
    }
    assert!(checked > 2000, "{checked}");
}

#[test]
fn repetition_in_the_game_history_is_a_draw() {
    // Black is a queen against a rook down; the rook and queen go back and forth. Ra8 repeats
    // the position after Black's first move. Seen once before, that is no draw yet (White
    // may deviate); seen twice, Ra8 makes the third occurrence: a draw, Black's best result.
    let start = fen("1r4k1/5ppp/8/8/8/8/5PPP/3Q2K1 b - - 0 1");
    let mut engine = Engine::new(Params::default(), 1);
    let alone = search(&mut engine, &[start], &Limits::depth(6));
    assert!(
        matches!(alone.score, Score::Cp(cp) if cp < -200),
        "{:?}",
        alone.score
    );

    let ra8 = parse_uci_move(&start, "b8a8").unwrap();
    let mut game = Game::new(start, Default::default());
    let stop = AtomicBool::new(false);
    for cycle in 0..2 {
        for uci in ["b8a8", "d1d2", "a8b8", "d2d1"] {
            let mv = parse_uci_move(game.position(), uci).unwrap();
            game.play(mv).unwrap();
        }
        assert_eq!(game.position().hash(), start.hash());
        engine.new_game();
        let result = engine.search_game(&game, &Limits::depth(6), &stop, &mut |_| {});
        if cycle == 0 {
            assert!(
                matches!(result.score, Score::Cp(cp) if cp < -200),
                "{:?}",
                result.score
            );
        } else {
            assert_eq!(result.best_move, Some(ra8));
            assert_eq!(result.score, Score::Cp(0));
        }
    }
}

#[test]
fn movetime_and_stop_end_the_search() {
    let mut engine = Engine::new(Params::default(), 4);
    let start = Instant::now();
    let result = search(
        &mut engine,
        &[Position::starting()],
        &Limits::movetime(Duration::from_millis(200)),
    );
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(100) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    assert!(result.best_move.is_some());

    // A stop flag raised from another thread ends an infinite search.
    let stop = AtomicBool::new(false);
    let limits = Limits {
        infinite: true,
        ..Limits::default()
    };
    let start = Instant::now();
    let result = std::thread::scope(|scope| {
        let handle =
            scope.spawn(|| engine.search(&[Position::starting()], &limits, &stop, &mut |_| {}));
        std::thread::sleep(Duration::from_millis(150));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        handle.join().unwrap()
    });
    assert!(start.elapsed() < Duration::from_millis(1500));
    assert!(result.best_move.is_some());
}

#[test]
fn searchmoves_and_info_callbacks() {
    let mut engine = Engine::new(Params::default(), 1);
    let pos = Position::starting();
    let only = parse_uci_move(&pos, "a2a3").unwrap();
    let limits = Limits {
        depth: Some(5),
        searchmoves: vec![only],
        ..Limits::default()
    };
    let stop = AtomicBool::new(false);
    let mut depths = Vec::new();
    let result = engine.search(&[pos], &limits, &stop, &mut |info| {
        assert_eq!(info.pv.first(), Some(&only));
        depths.push(info.depth);
    });
    assert_eq!(result.best_move, Some(only));
    assert_eq!(depths, vec![1, 2, 3, 4, 5]);
    assert_eq!(result.pv.first(), Some(&only));
}

#[test]
fn mates_and_no_moves() {
    let mut engine = Engine::new(Params::default(), 1);
    let mated = fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    let r = search(&mut engine, &[mated], &Limits::depth(4));
    assert_eq!((r.best_move, r.score), (None, Score::Mate(0)));
    let stalemate = fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    let r = search(&mut engine, &[stalemate], &Limits::depth(4));
    assert_eq!((r.best_move, r.score), (None, Score::Cp(0)));
    let r = search(&mut engine, &[], &Limits::depth(4));
    assert_eq!(r.best_move, None);
    // Mate in two with the ladder.
    let ladder = fen("7k/8/8/8/8/8/R7/1R4K1 w - - 0 1");
    let r = search(&mut engine, &[ladder], &Limits::depth(6));
    assert_eq!(r.score, Score::Mate(2));
}

#[test]
fn api_types_can_move_between_threads() {
    fn send<T: Send + 'static>() {}
    send::<Engine>();
    send::<Params>();
    send::<Limits>();
    send::<SearchResult>();
    // Moving an engine to another thread and back keeps it usable.
    let mut engine = Engine::new(Params::default(), 1);
    let engine_back = std::thread::spawn(move || {
        let r = search(&mut engine, &[Position::starting()], &Limits::depth(3));
        assert!(r.best_move.is_some());
        engine
    })
    .join()
    .unwrap();
    assert_eq!(engine_back.hash_mb(), 1);
}
