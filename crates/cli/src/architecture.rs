//! docs/ARCHITECTURE.md's crate table, checked against the workspace's manifests: each crate's
//! row names exactly the workspace crates its `Cargo.toml` depends on, and the rows run bottom
//! up, so that "a lower crate never imports a higher one" stays true as written.

use std::collections::BTreeSet;
use std::path::Path;

/// The workspace root: two folders above this crate's manifest.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("crates/cli is two folders below the workspace root")
}

/// (package name, short name) of every crate under `crates/`, and its workspace dependencies
/// (package names of `[dependencies]`, not dev-dependencies).
fn manifests() -> Vec<(String, String, BTreeSet<String>)> {
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).expect("crates/") {
        let dir = entry.expect("a crates/ entry").path();
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let manifest: toml::Table = toml::from_str(&text).expect("a Cargo.toml");
        let package = manifest["package"]["name"]
            .as_str()
            .expect("package.name")
            .to_owned();
        let short = dir.file_name().unwrap().to_string_lossy().into_owned();
        let dependencies = manifest
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|d| d.keys().cloned().collect())
            .unwrap_or_default();
        crates.push((package, short, dependencies));
    }
    crates
}

/// The table's rows in order: (short name, package name, the "depends on" cell).
fn table() -> Vec<(String, String, String)> {
    let text =
        std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md");
    let start = text
        .find("| crate | job | depends on |")
        .expect("the crate table");
    text[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let names: Vec<&str> = cells[0].split('`').collect();
            (
                names.get(1).copied().unwrap_or_default().to_owned(),
                names.get(3).copied().unwrap_or_default().to_owned(),
                cells[2].to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_crate_table_matches_the_manifests_and_runs_bottom_up() {
    let crates = manifests();
    let rows = table();
    let workspace: BTreeSet<&str> = crates.iter().map(|(p, ..)| p.as_str()).collect();
    let short_of = |package: &str| {
        crates
            .iter()
            .find(|(p, ..)| p == package)
            .map(|(_, s, _)| s.clone())
            .unwrap_or_else(|| package.to_owned())
    };
    let mut above: BTreeSet<String> = BTreeSet::new();
    for (package, short, dependencies) in &crates {
        let Some(index) = rows.iter().position(|(s, ..)| s == short) else {
            panic!("crate {short} ({package}) has no row in docs/ARCHITECTURE.md's table");
        };
        let (_, row_package, cell) = &rows[index];
        assert!(
            row_package.is_empty() || row_package == package,
            "row {short} names package {row_package:?}, Cargo.toml says {package:?}"
        );
        let actual: BTreeSet<String> = dependencies
            .iter()
            .filter(|d| workspace.contains(d.as_str()))
            .map(|d| short_of(d))
            .collect();
        let listed: BTreeSet<String> = cell
            .split(',')
            // The first word of each item: `tune (for its record types)` is `tune`.
            .filter_map(|d| d.split_whitespace().next().map(str::to_owned))
            .filter(|d| crates.iter().any(|(_, s, _)| s == d))
            .collect();
        assert_eq!(
            listed, actual,
            "docs/ARCHITECTURE.md's row for {short} lists {listed:?}; Cargo.toml depends on \
             {actual:?}"
        );
        for dependency in &actual {
            let below = rows.iter().position(|(s, ..)| s == dependency).unwrap();
            assert!(
                below < index,
                "{short} depends on {dependency}, which the table lists after it"
            );
        }
        above.insert(short.clone());
    }
    assert_eq!(above.len(), crates.len());
}

/// Issue 19: the report reads what the runner and the tuner stored (the records crate's types,
/// the store's facts), so it builds and changes without them; and the records it reads do not
/// reach back into their writers. Neither manifest may list them, not even for its tests.
#[test]
fn the_report_and_the_records_depend_on_neither_the_runner_nor_the_tuner() {
    for krate in ["report", "records"] {
        let path = root().join("crates").join(krate).join("Cargo.toml");
        let text = std::fs::read_to_string(&path).expect("the crate's Cargo.toml");
        let manifest: toml::Table = toml::from_str(&text).expect("a Cargo.toml");
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let listed = manifest.get(section).and_then(|d| d.as_table());
            for writer in ["arbiter-runner", "arbiter-tune"] {
                assert!(
                    listed.is_none_or(|d| !d.contains_key(writer)),
                    "{}: [{section}] lists {writer}; the {krate} crate reads records, not \
                     their writers",
                    path.display()
                );
            }
        }
    }
}
