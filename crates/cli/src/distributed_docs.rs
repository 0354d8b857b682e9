//! docs/distributed.md's deployment files, checked: every `arbiter ...` command line in it
//! (shell blocks, systemd's `ExecStart`, the Kubernetes Job's `args`, the Slurm script) parses
//! with this build's arguments once its variables are given sample values, and each file has
//! the parts its scheduler needs. A renamed flag breaks this test, not a user's fleet.

use std::path::Path;

use clap::Parser;

use crate::Cli;

fn document() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/distributed.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fenced blocks of `text` with their language tag.
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(tag)) => current = Some((tag.trim().to_owned(), String::new())),
            (Some(_), Some(_)) => found.extend(current.take()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    found
}

/// The words of a command line as the shell would pass them, after the variables the files
/// use are given sample values.
fn words(line: &str) -> Vec<String> {
    let mut text = line.to_owned();
    for (variable, value) in [
        ("${ARBITER_DB}", "postgres://arbiter@db.example/arbiter"),
        ("$ARBITER_DB", "postgres://arbiter@db.example/arbiter"),
        ("${SLURM_ARRAY_JOB_ID}", "77"),
        ("${SLURM_ARRAY_TASK_ID}", "3"),
        ("$SLURM_CPUS_PER_TASK", "8"),
        ("$JOB_COMPLETION_INDEX", "5"),
        ("$(hostname)", "host"),
        ("$(date +%F)", "2026-12-03"),
        ("%H", "host"),
        ("%i", "1"),
    ] {
        text = text.replace(variable, value);
    }
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' | '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The `arbiter` command lines of a block: from the word `arbiter` to the end of the line or
/// the shell's first redirection or operator (`> worker.token`, `| head`, `&`).
fn command_lines(body: &str) -> Vec<Vec<String>> {
    body.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(|line| {
            let words = words(line);
            let at = words
                .iter()
                .position(|w| w == "arbiter" || w.ends_with("/arbiter"))?;
            let end = words[at..]
                .iter()
                .position(|w| w.starts_with('>') || w.starts_with('|') || w.starts_with('&'))
                .map_or(words.len(), |n| at + n);
            Some(words[at..end].to_vec())
        })
        .collect()
}

#[test]
fn every_command_line_in_the_deployment_guide_parses() {
    let text = document();
    let mut checked = 0;
    for (tag, body) in blocks(&text) {
        // The SQL and the prose name the role `arbiter`; only these run the program.
        if !matches!(tag.as_str(), "sh" | "ini" | "yaml") {
            continue;
        }
        for words in command_lines(&body) {
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("a ```{tag} block of docs/distributed.md: {words:?}:\n{e}");
            }
            checked += 1;
        }
    }
    // submit, runs, stop, report; systemd; Kubernetes; Slurm.
    assert!(checked >= 7, "only {checked} command lines found");
}

#[test]
fn each_scheduler_file_has_what_its_scheduler_needs() {
    let blocks = blocks(&document());
    let body = |tag: &str, marker: &str| {
        blocks
            .iter()
            .find(|(t, b)| t == tag && b.contains(marker))
            .map(|(_, b)| b.clone())
            .unwrap_or_else(|| panic!("no ```{tag} block with {marker:?}"))
    };
    let unit = body("ini", "ExecStart=");
    for section in ["[Unit]", "[Service]", "[Install]"] {
        assert!(unit.contains(section), "the systemd unit lacks {section}");
    }
    for line in unit
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('['))
    {
        assert!(line.contains('='), "systemd line without a key: {line:?}");
    }
    let job = body("yaml", "kind: Job");
    for needed in [
        "apiVersion: batch/v1",
        "completionMode: Indexed",
        "restartPolicy:",
    ] {
        assert!(job.contains(needed), "the Job lacks {needed:?}");
    }
    assert!(!job.contains('\t'), "YAML indents with spaces");
    let slurm = body("sh", "#SBATCH");
    assert!(
        slurm.starts_with("#!/bin/bash\n"),
        "a Slurm script starts with its shell"
    );
    for needed in ["--array=", "--signal=TERM@"] {
        assert!(slurm.contains(needed), "the Slurm script lacks {needed}");
    }
}
