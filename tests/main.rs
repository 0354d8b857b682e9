//! The end-to-end tests of the `arbiter` binary, in one test binary: each file of this folder is
//! a module of it, so the suite links once however many files it has (linking is most of what an
//! optimised test build costs), and a file's tests are selected by its name:
//!
//! ```sh
//! cargo test -p arbiter --test e2e -- rate_cli::
//! ```
//!
//! The test harness runs the tests of one binary on threads of one process, so a test here never
//! changes the process's environment, current folder or signal handlers: it gives the `arbiter`
//! processes it starts their own (`Command::current_dir`, `Command::env`).
//!
//! A file added here is compiled only once it is declared below;
//! `every_file_of_the_folder_is_a_module` fails until it is.

mod common;

mod admin_cli;
mod book_cli;
mod ci_regression;
mod cutechess_compat;
mod datagen_cli;
mod fleet_cli;
mod fleet_spsa;
mod match_cli;
mod match_hardening;
mod match_real_engines;
mod match_resume;
mod perft_cli;
mod rate_cli;
mod report_browser;
mod report_cli;
mod report_tuning;
mod serve_chaos;
mod serve_cli;
mod sprt_cli;
mod tournament_cli;
mod tune_spsa_cli;
mod tune_texel_cli;

use std::collections::BTreeSet;
use std::path::Path;

/// Every `.rs` file and every folder with a `mod.rs` beside this one is declared as a module
/// here, and nothing else is: a test file that is not declared would never be compiled or run,
/// and would look covered to whoever reads the folder.
#[test]
fn every_file_of_the_folder_is_a_module() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests")
        .canonicalize()
        .unwrap();
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if path.join("mod.rs").is_file() {
                on_disk.insert(name);
            }
        } else if let Some(module) = name.strip_suffix(".rs") {
            if module != "main" {
                on_disk.insert(module.to_owned());
            }
        }
    }
    let main = std::fs::read_to_string(folder.join("main.rs")).unwrap();
    let declared: BTreeSet<String> = main
        .lines()
        .filter_map(|line| line.strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect();
    let missing: Vec<_> = on_disk.difference(&declared).collect();
    assert!(
        missing.is_empty(),
        "{}: these files are never compiled: add `mod NAME;` to tests/main.rs for each of {missing:?}",
        folder.display()
    );
    // The other direction cannot compile, but the check should not pass on a listing it misread.
    assert_eq!(
        on_disk,
        declared,
        "tests/main.rs against {}",
        folder.display()
    );
    assert!(declared.contains("common") && declared.contains("rate_cli"));
}

/// `.ci/run` runs exactly the two commands the README's top gives for the test suite, so what a
/// developer runs locally is what CI runs, and a figure measured for one holds for the other.
#[test]
fn ci_runs_the_readme_test_command() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let documented: Vec<&str> = readme
        .lines()
        .find(|line| line.starts_with("scripts/ci-setup.sh && "))
        .expect("README.md: no `scripts/ci-setup.sh && cargo test ...` line at the top")
        .split(" && ")
        .collect();
    let ci = std::fs::read_to_string(repo.join(".ci/run")).unwrap();
    let run: Vec<&str> = ci
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter(|line| !line.starts_with("set ") && !line.starts_with("cd "))
        .collect();
    assert_eq!(run, documented, ".ci/run against README.md's test command");
}
