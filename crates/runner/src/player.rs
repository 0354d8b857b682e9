//! Players: whatever can be asked for a move. A UCI engine process, or (with the `staunton`
//! engine linked in) an in-process engine.

use std::time::Duration;

use arbiter_rules::Position;

use crate::process::{EngineFault, ProcessSpec, Reply, Timeouts, UciProcess};
use crate::uci::{self, GoLimits};

/// What one player is, as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerKind {
    Uci(ProcessSpec),
}

/// A configured player: a name for the PGN and the tables, and how to start it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerSpec {
    pub name: String,
    pub kind: PlayerKind,
    pub timeouts: Timeouts,
    /// Start a fresh process for every game (`restart=on`).
    pub restart: bool,
}

/// One move request: the game so far in the forms the two kinds of player want.
pub struct MoveRequest<'a> {
    /// `position` command text for UCI engines.
    pub position_command: &'a str,
    /// Every position of the game so far, last = to move (for in-process engines).
    pub history: &'a [Position],
    pub limits: GoLimits,
    /// When the flag falls, measured from sending `go`.
    pub deadline: Option<Duration>,
}

/// A started player.
pub enum Player {
    Uci(UciProcess),
}

impl Player {
    pub async fn start(spec: &PlayerSpec) -> Result<Player, EngineFault> {
        match &spec.kind {
            PlayerKind::Uci(process) => Ok(Player::Uci(
                UciProcess::start(process, spec.timeouts).await?,
            )),
        }
    }

    /// Prepares for a new game (`ucinewgame` + sync).
    pub async fn new_game(&mut self) -> Result<(), EngineFault> {
        match self {
            Player::Uci(engine) => engine.new_game().await,
        }
    }

    pub async fn think(&mut self, request: &MoveRequest<'_>) -> Result<Reply, EngineFault> {
        match self {
            Player::Uci(engine) => {
                engine
                    .go(request.position_command, &request.limits, request.deadline)
                    .await
            }
        }
    }

    /// Ends the player politely.
    pub async fn shutdown(self) {
        match self {
            Player::Uci(engine) => engine.shutdown().await,
        }
    }
}

/// The `position` command for a game from `start` with `moves` played.
pub fn position_command(start: &Position, moves: &[String]) -> String {
    let fen = (*start != Position::starting()).then(|| start.fen());
    uci::position_command(fen.as_deref(), moves)
}
