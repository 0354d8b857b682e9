//! The match runner: arbiter's heart.
//!
//! It plays many games at once between engines, from opening books, in colour-swapped pairs,
//! referees them with the rules crate, and hands each finished pair to a sink: the store's
//! commits it and stops when the SPRT decides (the "players", "game loop" and "store" steps of
//! ARCHITECTURE.md's data path).
//!
//! The modules, bottom up; each imports only modules before it in this list (a test,
//! `module_graph`, keeps it so and finds any circle). [`uci`] is the protocol as text (pure functions); [`commlog`]
//! is the run's log of engine lines and messages; [`executor`] is where games and searches run
//! (the CPU pool, `block_on`, the game-thread flag); [`tc`] and [`adjudication`] are the clocks
//! and the score-based rules; [`openings`] loads books and picks unit `k`'s opening from the
//! seed; [`process`] owns an engine process and its timing; [`builtin`] is staunton in process;
//! [`player`] puts both behind one interface; [`game`] plays one game. [`spec`] is the run's
//! spec ([`spec::PlaySpec`] and [`spec::MatchSpec`]: who plays whom, and the pure arithmetic
//! of its schedule); [`lines`] formats every line printed about a run (the typed records it
//! prints from, a tournament's standings among them, are `arbiter_records`'); [`config`]
//! reads a run (TOML, or cutechess/fastchess flags in [`config::cutechess`]), checks it from
//! its text alone, and resolves it on the machine that plays it into a [`spec::MatchSpec`];
//! [`bench`] checks an engine's bench signature (the node count its `bench` prints) and pins
//! in-process staunton's; [`signature`] is what a run records of each engine's binary;
//! [`build`] builds an engine from source where a configuration gives a recipe;
//! [`lifecycle`] opens, resumes or creates the stored run a configuration names, the same way
//! for every command, and upgrades a run an older arbiter stored; [`render`] writes a game's
//! PGN and JSON; [`play`] is the play step (units in, finished pairs pushed into a
//! [`play::PairSink`]); [`sinks`] holds the store's sink (`run_match`) and the tuner's
//! (`tally_pairs`); [`books`] makes, checks and converts opening books; [`outputs`] writes the summary record and the export files;
//! [`coordinator`] is what a fleet worker asks of the database or of `arbiter serve`, and
//! [`fleet`] queues runs and is the worker. Faults of
//! engines are ordinary outcomes at every layer, never errors that stop a run.
//!
//! The entry points other crates await ([`sinks::run_match`], [`sinks::tally_pairs`],
//! [`lifecycle::open_match`], [`fleet::work`], [`play::Play::next_pair`] ...) return boxed futures,
//! as the store's methods do, and [`play::Play::start`] spawns its workers from a function
//! without type parameters. An `async fn`'s body, with every async call under it, is compiled
//! again in each crate that awaits it; behind a box it is compiled once, here, instead of in
//! the `arbiter` binary and each of the tests too (that was most of the test build's time).

// A library speaks through its caller (events, writers, errors); the terminal is the binary's.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod adjudication;
pub mod bench;
pub mod books;
pub mod build;
pub mod builtin;
pub mod commlog;
pub mod config;
pub mod coordinator;
pub mod executor;
pub mod fleet;
pub mod game;
pub mod lifecycle;
pub mod lines;
pub mod openings;
pub mod outputs;
pub mod play;
pub mod player;
pub mod process;
pub mod render;
pub mod signature;
pub mod sinks;
pub mod spec;
pub mod tc;
pub mod uci;

/// The runner's modules depend on each other in one direction: a change to a module can only
/// reach the modules above it, and each can be read (and tested) with only what is below it.
#[cfg(test)]
mod module_graph {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    /// The modules of the crate: each file `src/NAME.rs` with its directory `src/NAME/` if it
    /// has one (submodules are part of their parent), `lib.rs` aside (it only declares them).
    fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
        let mut modules = BTreeMap::new();
        for entry in std::fs::read_dir(src).expect("read src/") {
            let path = entry.expect("a directory entry").path();
            let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
                continue;
            };
            if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
                let mut files = vec![path.clone()];
                let dir = src.join(name);
                if dir.is_dir() {
                    files.extend(rust_files(&dir));
                }
                modules.insert(name.to_owned(), files);
            }
        }
        modules
    }

    fn rust_files(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).expect("read a module's directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                files.extend(rust_files(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
        files
    }

    /// The modules a source text names through `crate::`: `use crate::a::X`,
    /// `use crate::{a, b::Y}` and paths such as `crate::a::f()` in code. Comments (doc links
    /// among them) are not code and do not count.
    fn names(text: &str) -> BTreeSet<String> {
        let ident = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        let mut found = BTreeSet::new();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or_default();
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                let before = rest[..at].chars().next_back();
                rest = &rest[at + "crate::".len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                if let Some(group) = rest.strip_prefix('{') {
                    let inner = group.split('}').next().unwrap_or_default();
                    for item in inner.split(',') {
                        found.insert(ident(item.trim()));
                    }
                } else {
                    found.insert(ident(rest));
                }
            }
        }
        found.retain(|name| !name.is_empty());
        found
    }

    /// A circle of `edges`, as the modules along it, first repeated at the end.
    fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
        fn visit(
            module: &str,
            edges: &BTreeMap<String, BTreeSet<String>>,
            path: &mut Vec<String>,
            done: &mut BTreeSet<String>,
        ) -> Option<Vec<String>> {
            if let Some(at) = path.iter().position(|m| m == module) {
                let mut circle = path[at..].to_vec();
                circle.push(module.to_owned());
                return Some(circle);
            }
            if done.contains(module) {
                return None;
            }
            path.push(module.to_owned());
            for next in edges.get(module).into_iter().flatten() {
                if let Some(circle) = visit(next, edges, path, done) {
                    return Some(circle);
                }
            }
            path.pop();
            done.insert(module.to_owned());
            None
        }
        let mut done = BTreeSet::new();
        edges
            .keys()
            .find_map(|module| visit(module, edges, &mut Vec::new(), &mut done))
    }

    fn edges_of(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
        let modules = modules(src);
        modules
            .iter()
            .map(|(name, files)| {
                let mut uses = BTreeSet::new();
                for file in files {
                    let text = std::fs::read_to_string(file)
                        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                    uses.extend(names(&text));
                }
                // A module's own submodules are itself; anything not a module (a macro, a
                // re-export at the root) is no edge.
                uses.retain(|used| used != name && modules.contains_key(used));
                (name.clone(), uses)
            })
            .collect()
    }

    /// Issue 19: no module of the runner reaches itself through others (before, `builtin` and
    /// `process` imported each other, as did `config` and `tournament`, and `outputs` and
    /// `standings`). The message shows the circle and every module's edges.
    #[test]
    fn the_runners_modules_import_each_other_without_a_circle() {
        let edges = edges_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
        assert!(edges.len() >= 10, "modules not found: {edges:?}");
        assert!(edges["play"].contains("spec"), "edges not read: {edges:?}");
        let table: Vec<String> = edges
            .iter()
            .map(|(module, uses)| format!("{module} -> {uses:?}"))
            .collect();
        if let Some(circle) = circle(&edges) {
            panic!(
                "the runner's modules import each other in a circle: {}\n{}",
                circle.join(" -> "),
                table.join("\n")
            );
        }
    }

    /// The runner's modules bottom up, as the crate's docs list them: each may import only
    /// modules before it. A new module takes its place here.
    const LAYERS: &[&str] = &[
        "uci",
        "commlog",
        "executor",
        "tc",
        "adjudication",
        "openings",
        "process",
        "builtin",
        "player",
        "game",
        "spec",
        "lines",
        "config",
        "bench",
        "signature",
        "build",
        "render",
        "play",
        "sinks",
        "books",
        "outputs",
        "lifecycle",
        "coordinator",
        "fleet",
    ];

    /// Every `crate::` edge points down the list of layers: one direction of data.
    #[test]
    fn the_runners_modules_import_only_the_layers_below() {
        let edges = edges_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
        let layer = |module: &str| LAYERS.iter().position(|m| *m == module);
        let mut wrong = Vec::new();
        for (module, uses) in &edges {
            let Some(at) = layer(module) else {
                wrong.push(format!("{module} is in no layer (add it to LAYERS)"));
                continue;
            };
            for used in uses {
                if layer(used).is_none_or(|below| below >= at) {
                    wrong.push(format!("{module} imports {used}, which is not below it"));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// The reading of `crate::` paths and the search for circles, on texts and graphs whose
    /// answer is known.
    #[test]
    fn a_circle_is_found_and_named() {
        let text = "use crate::a::X;\nuse crate::{b, c::Y};\n// see [`crate::d`]\n\
                    let x = crate::e::f(); let y = notcrate::g::h;";
        assert_eq!(
            names(text),
            ["a", "b", "c", "e"].map(String::from).into_iter().collect()
        );
        let graph = |pairs: &[(&str, &str)]| {
            let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (from, to) in pairs {
                edges
                    .entry((*from).into())
                    .or_default()
                    .insert((*to).into());
                edges.entry((*to).into()).or_default();
            }
            edges
        };
        assert_eq!(circle(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
        assert_eq!(
            circle(&graph(&[("a", "b"), ("b", "c"), ("c", "b")])),
            Some(["b", "c", "b"].map(String::from).to_vec())
        );
    }
}
