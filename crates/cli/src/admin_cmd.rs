//! `arbiter admin token create|list|revoke`: the API tokens with which workers and people reach
//! a fleet through `arbiter serve` instead of with the database's credentials.
//!
//! Wiring only: the store draws the secret, keeps its hash and revokes
//! ([`Store::create_token`]). A secret is printed once, alone on stdout, so that
//! `arbiter admin token create NAME --scope worker --db URL > worker.token` writes the file a
//! worker reads and nothing else; everything said to the person goes to stderr.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use arbiter_records::text::printable_name;
use arbiter_store::{Location, Store, TokenInfo, TokenScope};

#[derive(clap::Subcommand)]
pub enum AdminCommand {
    /// Create, list and revoke API tokens (`arbiter serve`'s bearer tokens).
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
}

#[derive(clap::Subcommand)]
pub enum TokenAction {
    /// Create a token and print its secret, once, alone on stdout.
    Create(CreateArgs),
    /// List the tokens: name, scope, when created and when revoked.
    List(ListArgs),
    /// Revoke a token: it authenticates nobody from now on, on every server.
    Revoke(RevokeArgs),
}

#[derive(clap::Args)]
pub struct CreateArgs {
    /// The token's name, unique for the database's life (a revoked token keeps its name).
    name: String,
    /// What it may do: a worker's routes (claim, submit its own batches), a user's (submit,
    /// watch and stop runs), or everything.
    #[arg(long, value_name = "worker|user|admin")]
    scope: TokenScope,
    /// The database of the fleet (`postgres://...`, or an SQLite file).
    #[arg(long)]
    db: String,
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// The database of the fleet.
    #[arg(long)]
    db: String,
    /// One JSON array of the tokens instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct RevokeArgs {
    /// The token's name.
    name: String,
    /// The database of the fleet.
    #[arg(long)]
    db: String,
}

pub fn run(command: &AdminCommand) -> anyhow::Result<ExitCode> {
    let AdminCommand::Token { action } = command;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(async {
        match action {
            TokenAction::Create(args) => create(args).await,
            TokenAction::List(args) => list(args).await,
            TokenAction::Revoke(args) => revoke(args).await,
        }
    })
}

/// Creates the database if need be, as `arbiter submit` does: the first token is often made
/// before the first run is queued.
async fn create(args: &CreateArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open(&Location::parse(&args.db))
        .await
        .with_context(|| format!("open the database {}", args.db))?;
    let created = store.create_token(&args.name, args.scope).await;
    store.close().await;
    let (token, secret) = created?;
    outln!("{secret}")?;
    let _ = writeln!(
        std::io::stderr(),
        "created {} token {:?} (id {}); its secret, on stdout, is not shown again: the \
         database keeps only its hash",
        token.scope,
        printable_name(&token.name),
        token.id
    );
    Ok(ExitCode::SUCCESS)
}

/// An existing store only: a mistyped path is an error, not a new empty database.
async fn open_existing(db: &str) -> anyhow::Result<Store> {
    Store::open_existing(&Location::parse(db))
        .await
        .with_context(|| format!("open the database {db}"))
}

async fn list(args: &ListArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing(&args.db).await?;
    let tokens = store.tokens().await;
    store.close().await;
    let tokens = tokens?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string(&tokens).context("write the tokens as JSON")?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = tokens
        .iter()
        .map(|t| printable_name(&t.name).chars().count())
        .max()
        .unwrap_or(0)
        .max("NAME".len());
    outln!(
        "{:<width$}  {:<6}  {:<23}  REVOKED",
        "NAME",
        "SCOPE",
        "CREATED"
    )?;
    for token in &tokens {
        outln!("{}", token_row(token, width))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One line of `arbiter admin token list`; the name escaped, since anyone with a database
/// login may have named a token with terminal control sequences.
fn token_row(token: &TokenInfo, width: usize) -> String {
    format!(
        "{:<width$}  {:<6}  {:<23}  {}",
        printable_name(&token.name),
        token.scope,
        utc(token.created_at_ms),
        token.revoked_at_ms.map_or_else(|| "-".to_owned(), utc)
    )
}

async fn revoke(args: &RevokeArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing(&args.db).await?;
    let revoked = store.revoke_token(&args.name).await;
    store.close().await;
    let token = revoked?;
    outln!(
        "revoked {} token {:?} (id {}) as of {}; it authenticates nobody",
        token.scope,
        printable_name(&token.name),
        token.id,
        token.revoked_at_ms.map_or_else(|| "-".to_owned(), utc)
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `2026-12-04 14:39:04 UTC` from milliseconds since the Unix epoch (Howard Hinnant's
/// civil-from-days algorithm, as the runner's PGN dates: no calendar crate needed).
fn utc(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_395_144_999), "2026-12-04 14:39:04 UTC");
        assert_eq!(utc(-1), "1969-12-31 23:59:59 UTC");
    }

    #[test]
    fn a_row_escapes_the_name_and_says_when_it_was_revoked() {
        let token = TokenInfo {
            id: arbiter_store::TokenId::new(3),
            name: "evil\u{1b}[2J".into(),
            scope: TokenScope::User,
            created_at_ms: 0,
            revoked_at_ms: Some(60_000),
        };
        assert_eq!(
            token_row(&token, 12),
            "evil\\u{1b}[2J  user    1970-01-01 00:00:00 UTC  1970-01-01 00:01:00 UTC"
        );
        let live = TokenInfo {
            revoked_at_ms: None,
            ..token
        };
        assert!(
            token_row(&live, 12).ends_with("UTC  -"),
            "{}",
            token_row(&live, 12)
        );
    }
}
