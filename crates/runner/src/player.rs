//! Players: whatever can be asked for a move. A UCI engine process, or staunton in process.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use arbiter_rules::uci::move_to_uci;
use arbiter_rules::{Move, Position};

use crate::builtin::{BuiltinPlayer, BuiltinSpec};
use crate::commlog::EngineTap;
use crate::process::{EngineFault, ProcessSpec, Reply, Timeouts, UciProcess};
use crate::uci::{self, GoLimits};

/// What one player is, as configured.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerKind {
    Uci(ProcessSpec),
    /// staunton, searching on the runner's CPU pool: no process, no pipes.
    Builtin(Box<BuiltinSpec>),
}

/// A configured player: a name for the PGN and the tables, and how to start it.
#[derive(Clone, Debug, PartialEq)]
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
    Uci(Box<UciProcess>),
    Builtin(BuiltinPlayer),
}

impl Player {
    pub async fn start(spec: &PlayerSpec) -> Result<Player, EngineFault> {
        Player::start_logged(spec, None).await
    }

    /// [`Player::start`] with a UCI engine's lines going to the run's log. staunton in
    /// process has no lines to log.
    pub async fn start_logged(
        spec: &PlayerSpec,
        tap: Option<EngineTap>,
    ) -> Result<Player, EngineFault> {
        match &spec.kind {
            PlayerKind::Uci(process) => Ok(Player::Uci(Box::new(
                UciProcess::start_logged(process, spec.timeouts, tap).await?,
            ))),
            PlayerKind::Builtin(builtin) => Ok(Player::Builtin(BuiltinPlayer::new(
                builtin,
                spec.timeouts.unclocked_move,
            ))),
        }
    }

    /// The game the player's next lines in the run's log belong to.
    pub fn log_game(&mut self, game: u64) {
        if let Player::Uci(engine) = self {
            engine.log_game(game);
        }
    }

    pub fn is_builtin(&self) -> bool {
        matches!(self, Player::Builtin(_))
    }

    /// Lets the match's stop flag cut an in-process player's searches short, and end a wait
    /// for a UCI engine on a game's own thread.
    pub fn abort_on(&mut self, stop: &Arc<AtomicBool>) {
        match self {
            Player::Uci(engine) => engine.abort_on(Arc::clone(stop)),
            Player::Builtin(engine) => engine.abort_on(Arc::clone(stop)),
        }
    }

    /// Whether the match's stop flag (see [`Player::abort_on`]) is set.
    pub fn stopped(&self) -> bool {
        match self {
            Player::Uci(engine) => engine.stopped(),
            Player::Builtin(engine) => engine.stopped(),
        }
    }

    /// Prepares for a new game (`ucinewgame` + sync).
    pub async fn new_game(&mut self) -> Result<(), EngineFault> {
        match self {
            Player::Uci(engine) => engine.new_game().await,
            Player::Builtin(engine) => {
                engine.new_game();
                Ok(())
            }
        }
    }

    /// fastchess's `-ping-ms` check: `isready`, and `readyok` within `within`, or the engine is
    /// stalled (`EngineFault::Stalled`, "no readyok within 0.5 s"). An in-process player is
    /// always ready.
    pub async fn ping(&mut self, within: Duration) -> Result<(), EngineFault> {
        match self {
            Player::Uci(engine) => engine.ping(within).await,
            Player::Builtin(_) => Ok(()),
        }
    }

    pub async fn think(&mut self, request: &MoveRequest<'_>) -> Result<Reply, EngineFault> {
        match self {
            Player::Uci(engine) => {
                engine
                    .go(request.position_command, &request.limits, request.deadline)
                    .await
            }
            Player::Builtin(engine) => {
                engine
                    .think(request.history, &request.limits, request.deadline)
                    .await
            }
        }
    }

    /// Ends the player politely.
    pub async fn shutdown(self) {
        match self {
            Player::Uci(engine) => engine.shutdown().await,
            Player::Builtin(_) => {}
        }
    }
}

/// The `position` command of a game, grown by one move at a time: UCI wants the whole game
/// every move, and rebuilding it would make each game quadratic in its length.
pub struct PositionCommand {
    text: String,
    has_moves: bool,
}

impl PositionCommand {
    pub fn new(start: &Position) -> PositionCommand {
        let fen = (*start != Position::starting()).then(|| start.fen());
        let mut text = uci::PositionCommand::line(fen.as_deref(), &[]);
        text.reserve(6 * 200);
        PositionCommand {
            text,
            has_moves: false,
        }
    }

    pub fn push(&mut self, mv: Move) {
        if !self.has_moves {
            self.text.push_str(" moves");
            self.has_moves = true;
        }
        self.text.push(' ');
        self.text.push_str(&move_to_uci(Some(mv)));
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}
