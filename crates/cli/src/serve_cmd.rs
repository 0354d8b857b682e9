//! `arbiter serve`: the fleet's HTTP face, for workers without database credentials.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use arbiter_server::api::PREFIX;
use arbiter_server::AppState;
use arbiter_tune::spsa_fleet::SpsaTuner;
use tokio::sync::watch;

use crate::fleet_cmd::{open, runtime};

#[derive(clap::Args)]
pub struct ServeArgs {
    /// The fleet's database: PostgreSQL (an SQLite file serves the workers of one machine).
    #[arg(long)]
    db: String,
    /// The address to listen on; put a TLS-terminating reverse proxy in front for the internet.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: String,
}

pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let store = Arc::new(open(&args.db).await?);
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("listen on {}", args.listen))?;
        let address = listener.local_addr().context("the listening address")?;
        let (stop_tx, mut stop_rx) = watch::channel(None);
        crate::on_stop_signals(move |signal| {
            let _ = stop_tx.send(Some(signal));
        });
        let mut stopped = stop_rx.clone();
        writeln!(
            std::io::stderr(),
            "arbiter serve: listening on http://{address}{PREFIX} (database {})",
            store.location()
        )?;
        // The server applies tuning runs' updates with SPSA's tuner, as a worker on the
        // database does.
        let tuner = Arc::new(SpsaTuner) as Arc<dyn arbiter_runner::fleet::Tuner>;
        let state = AppState::new(store.clone(), Some(tuner));
        arbiter_server::serve(state, listener, async move {
            let _ = stopped.wait_for(Option::is_some).await;
        })
        .await
        .context("serve")?;
        let signal = *stop_rx.borrow_and_update();
        writeln!(std::io::stderr(), "arbiter serve: stopped")?;
        Ok(match signal {
            Some(signal) => ExitCode::from(signal.exit_status()),
            None => ExitCode::SUCCESS,
        })
    })
}
