//! Each message read back from its own spelling is the message (`parse(format(x)) == x`), over
//! generated values; and lines real engines print (Stockfish, Ethereal, Lc0) are read and
//! written again stably, Stockfish's exactly as printed.

use std::time::Duration;

use arbiter_uci::{
    BestMove, Bound, Clocks, GoLimits, Info, OptionDecl, PositionCommand, Score, SetOption, Start,
};
use proptest::collection::vec;
use proptest::option::of;
use proptest::prelude::*;

fn uci_move() -> impl Strategy<Value = String> {
    "[a-h][1-8][a-h][1-8][qrbn]?"
}

/// A word of free text: any printable ASCII, no spaces.
fn word() -> impl Strategy<Value = String> {
    "[!-~]{1,8}"
}

/// Words joined by one space, none of them one of `keywords`.
fn words_without(
    keywords: &'static [&'static str],
    count: std::ops::Range<usize>,
) -> impl Strategy<Value = String> {
    vec(
        word().prop_filter("a keyword", |w| !keywords.contains(&w.as_str())),
        count,
    )
    .prop_map(|words| words.join(" "))
}

fn millis() -> impl Strategy<Value = Duration> {
    any::<u64>().prop_map(Duration::from_millis)
}

fn score() -> impl Strategy<Value = Score> {
    prop_oneof![
        any::<i32>().prop_map(Score::Cp),
        any::<i32>().prop_map(Score::Mate)
    ]
}

prop_compose! {
    fn info()(
        depth in of(any::<u32>()), seldepth in of(any::<u32>()), multipv in of(any::<u32>()),
        scored in of((score(), of(prop_oneof![Just(Bound::Lower), Just(Bound::Upper)]))),
        nodes in of(any::<u64>()), nps in of(any::<u64>()), hashfull in of(any::<u32>()),
        tbhits in of(any::<u64>()), time in of(millis()), pv in vec(uci_move(), 0..8),
        string in of(words_without(&[], 0..6)),
    ) -> Info {
        Info {
            depth, seldepth, multipv,
            score: scored.map(|(score, _)| score),
            bound: scored.and_then(|(_, bound)| bound),
            nodes, nps, hashfull, tbhits, time, pv, string,
        }
    }
}

prop_compose! {
    fn clocks()(
        wtime in (1..=u64::MAX).prop_map(Duration::from_millis),
        btime in (1..=u64::MAX).prop_map(Duration::from_millis),
        winc in millis(), binc in millis(), movestogo in of(1..=u32::MAX),
    ) -> Clocks {
        Clocks { wtime, btime, winc, binc, movestogo }
    }
}

prop_compose! {
    fn go_limits()(
        clocks in of(clocks()), movetime in of(millis()), nodes in of(any::<u64>()),
        depth in of(any::<u32>()), mate in of(any::<u32>()), infinite in any::<bool>(),
        ponder in any::<bool>(), searchmoves in vec(uci_move(), 0..5),
    ) -> GoLimits {
        GoLimits { clocks, movetime, nodes, depth, mate, infinite, ponder, searchmoves }
    }
}

const OPTION_KEYWORDS: &[&str] = &["type", "default", "min", "max", "var"];

prop_compose! {
    fn option_decl()(
        name in words_without(OPTION_KEYWORDS, 1..4),
        kind in prop_oneof![
            Just("spin".to_owned()), Just("check".to_owned()), Just("combo".to_owned()),
            Just("button".to_owned()), Just("string".to_owned()),
            words_without(OPTION_KEYWORDS, 1..2),
        ],
        default in of(words_without(OPTION_KEYWORDS, 0..4)),
        min in of(any::<i64>()), max in of(any::<i64>()),
        vars in vec(words_without(OPTION_KEYWORDS, 1..3), 0..4),
    ) -> OptionDecl {
        OptionDecl { name, kind, default, min, max, vars }
    }
}

fn position_command() -> impl Strategy<Value = PositionCommand> {
    let start = prop_oneof![
        Just(Start::StartPos),
        words_without(&["moves"], 1..7).prop_map(Start::Fen),
    ];
    (start, vec(uci_move(), 0..12)).prop_map(|(start, moves)| PositionCommand { start, moves })
}

proptest! {
    #[test]
    fn info_round_trips(info in info()) {
        prop_assert_eq!(Info::parse(&info.to_string()), info);
    }

    #[test]
    fn go_round_trips(limits in go_limits()) {
        let (parsed, problems) = GoLimits::parse(&limits.to_string());
        prop_assert_eq!(problems, vec![]);
        prop_assert_eq!(parsed, limits);
    }

    #[test]
    fn option_round_trips(decl in option_decl()) {
        prop_assert_eq!(OptionDecl::parse(&decl.to_string()), Some(decl));
    }

    #[test]
    fn setoption_round_trips(
        name in words_without(&["value"], 1..4),
        value in of(words_without(&[], 0..4)),
    ) {
        let set = SetOption { name, value };
        prop_assert_eq!(SetOption::parse(&set.to_string()), Ok(set));
    }

    #[test]
    fn position_round_trips(command in position_command()) {
        let line = command.to_string();
        prop_assert_eq!(PositionCommand::parse(&line), Ok(command.clone()));
        let fen = match &command.start {
            Start::StartPos => None,
            Start::Fen(fen) => Some(fen.as_str()),
        };
        prop_assert_eq!(PositionCommand::line(fen, &command.moves), line);
    }

    #[test]
    fn bestmove_round_trips(
        mv in prop_oneof![uci_move(), Just("0000".to_owned()), Just("(none)".to_owned())],
        ponder in of(uci_move()),
    ) {
        let best = BestMove { mv, ponder };
        prop_assert_eq!(BestMove::parse(&best.to_string()), Some(best));
    }

    /// Whatever an engine prints, reading it never panics, and what was read is written and
    /// read again unchanged.
    #[test]
    fn any_line_is_read_stably(line in "[ -~\t]{0,80}") {
        let info = Info::parse(&line);
        prop_assert_eq!(Info::parse(&info.to_string()), info);
        let (limits, _) = GoLimits::parse(&line);
        prop_assert_eq!(GoLimits::parse(&limits.to_string()).0, limits);
        if let Some(decl) = OptionDecl::parse(&format!("option name {line}")) {
            let again = OptionDecl::parse(&decl.to_string());
            prop_assert_eq!(again.map(|d| d.to_string()), Some(decl.to_string()));
        }
        let _ = BestMove::parse(&line);
        let _ = PositionCommand::parse(&line);
        let _ = SetOption::parse(&line);
    }
}

/// Lines as the engines print them. Stockfish's are in the order [`Info`]'s `Display` writes,
/// so they come back exactly; the others come back in that order, with what arbiter does not
/// keep (`wdl`, `currmove`) left out, and stay so.
#[test]
fn real_engine_lines_are_stable() {
    let exact = [
        "info depth 20 seldepth 28 multipv 1 score cp 31 nodes 1468367 nps 1223639 hashfull 532 \
         tbhits 0 time 1200 pv e2e4 e7e5 g1f3 b8c6 f1b5 g8f6 e1g1 f6e4 f1e1 e4d6",
        "info depth 23 seldepth 30 multipv 2 score cp -40 upperbound nodes 2800000 nps 1400000 \
         hashfull 800 tbhits 0 time 2000 pv d2d4",
        "info depth 245 seldepth 3 multipv 1 score mate 2 nodes 1234 nps 617000 tbhits 0 time 2 \
         pv h5f7 e8e7 c4d5",
        "info depth 0 score mate 0",
        "info string NNUE evaluation using nn-5af11540bbfe.nnue (70MiB, (22528, 3072, 15, 32, 1))",
        "bestmove e2e4 ponder e7e5",
        "bestmove (none)",
        "option name Threads type spin default 1 min 1 max 1024",
        "option name Debug Log File type string default <empty>",
        "option name Ponder type check default false",
        "option name Clear Hash type button",
        "option name Backend type combo default cuda-auto var cuda-auto var cuda var cudnn",
        "go wtime 300000 btime 300000 winc 3000 binc 3000",
        "go ponder wtime 1000 btime 2000 movestogo 40",
        "go movetime 100",
        "go infinite searchmoves e2e4 d2d4",
        "position startpos moves e2e4 e7e5",
        "position fen rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 moves c7c5",
        "setoption name Move Overhead value 100",
        "setoption name Clear Hash",
    ];
    for line in exact {
        assert_eq!(reformat(line), line);
    }
    let reordered = [
        // Stockfish with UCI_ShowWDL, and while searching.
        (
            "info depth 10 seldepth 12 multipv 1 score cp 35 wdl 67 896 37 nodes 12345 nps 617250 \
             hashfull 4 tbhits 0 time 20 pv e2e4 e7e5",
            "info depth 10 seldepth 12 multipv 1 score cp 35 nodes 12345 nps 617250 hashfull 4 \
             tbhits 0 time 20 pv e2e4 e7e5",
        ),
        (
            "info depth 24 currmove e2e4 currmovenumber 1",
            "info depth 24",
        ),
        // Ethereal puts time before nodes and hashfull last.
        (
            "info depth 14 seldepth 21 multipv 1 score cp 28 time 1203 nodes 1650823 nps 1372000 \
             tbhits 0 hashfull 41 pv e2e4 c7c5 g1f3",
            "info depth 14 seldepth 21 multipv 1 score cp 28 nodes 1650823 nps 1372000 \
             hashfull 41 tbhits 0 time 1203 pv e2e4 c7c5 g1f3",
        ),
        // Odd spacing.
        ("  info   depth 3\tscore cp 9 ", "info depth 3 score cp 9"),
        (
            "option name  SyzygyPath  type string default   <empty>",
            "option name SyzygyPath type string default <empty>",
        ),
        ("bestmove  e7e8q  ", "bestmove e7e8q"),
    ];
    for (line, written) in reordered {
        assert_eq!(reformat(line), written, "{line}");
        assert_eq!(reformat(written), written);
    }
}

/// The line read as the message its first word names, and written again.
fn reformat(line: &str) -> String {
    match line.split_ascii_whitespace().next() {
        Some("info") => Info::parse(line).to_string(),
        Some("bestmove") => BestMove::parse(line).unwrap().to_string(),
        Some("option") => OptionDecl::parse(line).unwrap().to_string(),
        Some("go") => {
            let (limits, problems) = GoLimits::parse(line);
            assert_eq!(problems, vec![], "{line}");
            limits.to_string()
        }
        Some("position") => PositionCommand::parse(line).unwrap().to_string(),
        Some("setoption") => SetOption::parse(line).unwrap().to_string(),
        _ => panic!("not a message: {line}"),
    }
}
