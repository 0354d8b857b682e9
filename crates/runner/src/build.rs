//! Engines built from source on the machine that plays them (`[engine.build]`), as OpenBench's
//! workers build each test's commits: the repository cloned at the recipe's commit, its
//! command run in the checkout, its binary played.
//!
//! A build is cached by its recipe under the worker's build folder and reused by every later
//! run of the same recipe. It is made in a folder of its own and renamed into place only when
//! the binary exists, so a build killed half-way (or two workers building the same recipe at
//! once) never leaves a half-built engine where a worker would play it; the loser of a race
//! drops its copy and plays the winner's.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::io::AsyncReadExt;

use crate::config::{BuildRecipe, CheckedConfig, Program};

/// How long one step of a build (the clone, the checkout, the command) may take.
pub const BUILD_STEP_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The most of a step's output kept for its error message.
const KEPT_OUTPUT: usize = 2000;

/// Where `recipe` is built under `builds`: a folder named by the recipe's hash.
pub fn build_folder(builds: &Path, recipe: &BuildRecipe) -> PathBuf {
    let signature = recipe.signature();
    let hash = signature.rsplit('#').next().unwrap_or(&signature);
    builds.join(format!(
        "{}-{hash}",
        &recipe.commit[..12.min(recipe.commit.len())]
    ))
}

/// The binary of `recipe`, built under `builds` now if no earlier run built it.
pub fn build<'a>(
    recipe: &'a BuildRecipe,
    builds: &'a Path,
) -> BoxFuture<'a, Result<PathBuf, String>> {
    Box::pin(async move {
        let folder = build_folder(builds, recipe);
        let binary = folder.join("src").join(&recipe.binary);
        if binary.is_file() {
            return Ok(binary);
        }
        std::fs::create_dir_all(builds)
            .map_err(|e| format!("cannot create the build folder {}: {e}", builds.display()))?;
        let scratch = tempfile::Builder::new()
            .prefix(".building-")
            .tempdir_in(builds)
            .map_err(|e| format!("cannot make a folder in {}: {e}", builds.display()))?;
        let src = scratch.path().join("src");
        let src_text = src.display().to_string();
        run_step(
            "git",
            &[
                "clone",
                "--quiet",
                "--no-checkout",
                "--",
                &recipe.repo,
                &src_text,
            ],
            scratch.path(),
        )
        .await?;
        run_step(
            "git",
            &[
                "-c",
                "advice.detachedHead=false",
                "checkout",
                "--quiet",
                "--detach",
                &recipe.commit,
            ],
            &src,
        )
        .await?;
        run_step("sh", &["-c", &recipe.command], &src).await?;
        if !src.join(&recipe.binary).is_file() {
            return Err(format!(
                "`{}` finished, but left no {} in the checkout",
                recipe.command,
                recipe.binary.display()
            ));
        }
        // Into place whole; another worker's finished build of the same recipe wins.
        let built = scratch.keep();
        if let Err(e) = std::fs::rename(&built, &folder) {
            let _ = std::fs::remove_dir_all(&built);
            if !binary.is_file() {
                return Err(format!(
                    "cannot move the build to {}: {e}",
                    folder.display()
                ));
            }
        }
        Ok(binary)
    })
}

/// Runs one step of a build in `dir`; its error names the step and ends with its output.
async fn run_step(program: &str, args: &[&str], dir: &Path) -> Result<(), String> {
    let shown = format!("{program} {}", args.join(" "));
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start `{shown}`: {e}"))?;
    let (mut stdout, mut stderr) = (
        child.stdout.take().expect("piped"),
        child.stderr.take().expect("piped"),
    );
    let run = async {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let _ = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
        let status = child.wait().await;
        (status, out, err)
    };
    let (status, out, err) = tokio::time::timeout(BUILD_STEP_TIMEOUT, run)
        .await
        .map_err(|_| {
            format!(
                "`{shown}` did not finish in {} minutes",
                BUILD_STEP_TIMEOUT.as_secs() / 60
            )
        })?;
    let status = status.map_err(|e| format!("`{shown}`: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&err)
    );
    let said = said.trim();
    let tail: String = said
        .chars()
        .rev()
        .take(KEPT_OUTPUT)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    Err(format!("`{shown}` failed ({status}): {tail}"))
}

/// Builds each engine of `checked` that has a recipe and points its program at the binary.
pub fn build_engines<'a>(
    checked: &'a mut CheckedConfig,
    builds: &'a Path,
) -> BoxFuture<'a, Result<(), String>> {
    Box::pin(async move {
        for engine in &mut checked.engines {
            let (Some(recipe), Program::Uci(process)) = (&engine.build, &mut engine.program) else {
                continue;
            };
            process.cmd = build(recipe, builds).await.map_err(|why| {
                format!(
                    "engine {}: building {} at {}: {why}",
                    engine.name,
                    recipe.repo,
                    &recipe.commit[..12.min(recipe.commit.len())]
                )
            })?;
        }
        Ok(())
    })
}
