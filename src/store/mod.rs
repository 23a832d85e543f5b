//! The profile store (design S5, "sharing hot traces across runs"): the
//! superblocks runs of a program built, merged per program in a database,
//! so that the next run of the same program pre-builds them at start
//! instead of waiting for its counters to reach the thresholds again.
//!
//! A program is keyed by its identity: `build-id:HEX` (its GNU build id)
//! or, without one, `sha256:HEX` (its content), with its file name beside
//! it. A trace is one superblock's path as module-relative members (the
//! module's identity and the member's offset from the module's base, so it
//! survives ASLR and serves every program linked with the same library
//! build), with what each member must still be to be used again: its size,
//! instruction count and a hash of its guest bytes.
//!
//! Invariants:
//! - I1 (merge): a run that built superblocks merges them in one
//!   transaction: each distinct trace of the run counts once, a new one
//!   with count 1, a known one +1, and the program's version goes up by
//!   one. Concurrent merges into one store never lose a count (SQLite:
//!   `BEGIN IMMEDIATE` under a busy timeout; PostgreSQL: upserts in one
//!   transaction).
//! - I2 (identity): a trace is only ever used for a module of the same
//!   identity, at the same offset, and only when the block found there has
//!   the stored size, instruction count and code hash (feed.rs); anything
//!   else is ignored, never built differently.
//! - I3 (harmless): a store problem (unreachable server, corrupt file,
//!   unreadable rows) is a one-line warning for `run` and an error for
//!   `hotlift store`; it never changes what the guest does or what the
//!   profile counts.
//! - I4 (schema): both backends hold the same three tables (docs/STORE.md);
//!   a store of another schema version is refused.
//!
//! Usage: [`Store::open`] with a URL (a file path, `sqlite:PATH`, or
//! `postgres://…`), then [`Store::merge`], [`Store::load`],
//! [`Store::programs`], [`Store::traces`], [`Store::prune`]. A run uses it
//! through [`run::RunStore`] (start: a background reader and the
//! monitor's [`feed::Prebuild`]; exit: [`run::RunStore::merge_at_exit`]).

pub mod feed;
mod identity;
mod path;
mod pg;
pub mod run;
mod sqlite;

use std::path::PathBuf;
use std::time::Duration;

use crate::options::redact;

pub use identity::{module_identity, program_key};
pub use path::{code_hash, ModuleRef, PathMember, TracePath};

/// The schema version both backends write into `hotlift_meta`.
pub const SCHEMA: i64 = 1;

/// How long a writer waits for another one (SQLite busy timeout), and the
/// default connect timeout of a PostgreSQL store.
pub const WAIT: Duration = Duration::from_secs(30);
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything that can go wrong with a store (I3: one line each).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("bad store URL {url:?}: {why}")]
    BadUrl { url: String, why: String },
    #[error("no store at {0}")]
    Missing(PathBuf),
    #[error("{what}: not a usable hotlift store ({why})")]
    Corrupt { what: String, why: String },
    #[error("{0}: no hotlift tables (no run has merged into it yet)")]
    Empty(String),
    #[error("{what}: store schema {found}, this hotlift reads schema {SCHEMA}")]
    Schema { what: String, found: String },
    #[error("{what}: {why}")]
    Sqlite { what: String, why: String },
    #[error("{what}: {why}")]
    Postgres { what: String, why: String },
    #[error("unknown program {0:?} (hotlift store list shows the programs)")]
    UnknownProgram(String),
    #[error("program {pattern:?} is ambiguous: {matches}")]
    Ambiguous { pattern: String, matches: String },
    #[error("{0}")]
    Io(String),
}

/// The program a run merges into and reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramKey {
    /// `build-id:HEX` or `sha256:HEX`.
    pub identity: String,
    /// The file name.
    pub name: String,
}

/// A trace as stored, with how many runs built it.
#[derive(Debug, Clone)]
pub struct StoredTrace {
    pub path: TracePath,
    pub count: u64,
}

/// What a run reads at start: the program's version and its traces.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub version: u64,
    pub traces: Vec<StoredTrace>,
    /// Rows whose path did not parse (ignored, I2).
    pub unreadable: u64,
}

/// One program, as `hotlift store list` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProgramRow {
    pub identity: String,
    pub name: String,
    pub version: u64,
    pub traces: u64,
    /// Unix seconds of the last merge or prune.
    pub updated: i64,
}

/// One trace row, as `hotlift store show` and `export` give it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TraceRow {
    pub key: String,
    /// The path, or why it does not parse.
    pub path: Result<TracePath, String>,
    pub count: u64,
    pub first_seen: i64,
    pub last_seen: i64,
}

/// What one merge did (I1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MergeOutcome {
    /// The program's version after the merge.
    pub version: u64,
    pub new_traces: u64,
    pub known_traces: u64,
}

/// Which traces `prune` removes (all given criteria must hold); with a
/// program and no criterion, the whole program goes.
#[derive(Debug, Clone, Default)]
pub struct Prune {
    /// Only this program (an identity).
    pub program: Option<String>,
    /// Traces built by fewer runs than this.
    pub below: Option<u64>,
    /// Traces last merged before this time (unix seconds).
    pub before: Option<i64>,
}

/// What `prune` removed.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct PruneOutcome {
    pub traces: u64,
    pub programs: u64,
}

/// What a backend does; both speak the same schema (I4).
trait Backend: Send {
    fn merge(
        &mut self,
        program: &ProgramKey,
        traces: &[TracePath],
        now: i64,
    ) -> Result<MergeOutcome, StoreError>;
    /// The program's version, and its traces built by at least `min_count`
    /// runs when that version is newer than `have`.
    fn load(
        &mut self,
        identity: &str,
        have: u64,
        min_count: u64,
    ) -> Result<Option<Loaded>, StoreError>;
    fn programs(&mut self) -> Result<Vec<ProgramRow>, StoreError>;
    fn traces(&mut self, identity: &str) -> Result<Vec<TraceRow>, StoreError>;
    fn prune(&mut self, p: &Prune, now: i64) -> Result<PruneOutcome, StoreError>;
}

/// Where a store lives, from its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    /// A libpq-style URL (`postgres://user@host:port/db?...`).
    Postgres(String),
}

impl Location {
    /// `postgres://…` or `postgresql://…`; `sqlite:PATH`; any other text
    /// without a `scheme://` is a file path (an SQLite store).
    pub fn parse(url: &str) -> Result<Location, StoreError> {
        let bad = |why: &str| StoreError::BadUrl {
            url: redact(url),
            why: why.into(),
        };
        if url.is_empty() {
            return Err(bad("empty"));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Location::Postgres(url.to_string()));
        }
        if let Some(p) = url.strip_prefix("sqlite:") {
            let p = p.strip_prefix("//").unwrap_or(p);
            if p.is_empty() {
                return Err(bad("no file after sqlite:"));
            }
            return Ok(Location::Sqlite(PathBuf::from(p)));
        }
        if let Some((scheme, _)) = url.split_once("://") {
            if !scheme.contains('/') {
                return Err(bad(&format!(
                    "unknown scheme {scheme:?} (a file path, sqlite:PATH or postgres://)"
                )));
            }
        }
        Ok(Location::Sqlite(PathBuf::from(url)))
    }
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Make what is missing (the SQLite file and its directory, the
    /// tables): a run that merges.
    Create,
    /// The store must exist (`hotlift store`).
    Existing,
    /// Read only, never written (a run reading at start; an SQLite file
    /// is opened read-only).
    ReadOnly,
}

/// An open store.
pub struct Store {
    what: String,
    backend: Box<dyn Backend>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.what)
    }
}

impl Store {
    /// Open the store at `url` (see [`Open`]). A store without the tables
    /// (a new database) is [`StoreError::Empty`] unless they are made.
    pub fn open(url: &str, how: Open) -> Result<Store, StoreError> {
        let what = redact(url);
        let backend: Box<dyn Backend> = match Location::parse(url)? {
            Location::Sqlite(p) => Box::new(sqlite::SqliteStore::open(&p, how)?),
            Location::Postgres(u) => Box::new(pg::PgStore::open(&u, &what, how)?),
        };
        Ok(Store { what, backend })
    }

    /// The URL, without its password.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// Merge one run's traces of `program` (I1); nothing at all when there
    /// are none (the version stays).
    pub fn merge(
        &mut self,
        program: &ProgramKey,
        traces: &[TracePath],
    ) -> Result<MergeOutcome, StoreError> {
        if traces.is_empty() {
            return Ok(MergeOutcome::default());
        }
        let mut seen = std::collections::HashSet::new();
        let unique: Vec<TracePath> = traces
            .iter()
            .filter(|t| seen.insert(t.key()))
            .cloned()
            .collect();
        self.backend.merge(program, &unique, now())
    }

    /// The traces of program `identity` built by at least `min_count`
    /// runs, when its version is newer than `have` (a run starts with 0).
    pub fn load(
        &mut self,
        identity: &str,
        have: u64,
        min_count: u64,
    ) -> Result<Option<Loaded>, StoreError> {
        self.backend.load(identity, have, min_count)
    }

    pub fn programs(&mut self) -> Result<Vec<ProgramRow>, StoreError> {
        self.backend.programs()
    }

    /// Every trace of program `identity`, most-built first.
    pub fn traces(&mut self, identity: &str) -> Result<Vec<TraceRow>, StoreError> {
        self.backend.traces(identity)
    }

    pub fn prune(&mut self, p: &Prune) -> Result<PruneOutcome, StoreError> {
        self.backend.prune(p, now())
    }

    /// The program `pattern` names: its identity, a unique prefix of it (of
    /// the hex digits too), or a unique name.
    pub fn find_program(&mut self, pattern: &str) -> Result<ProgramRow, StoreError> {
        let all = self.programs()?;
        let hex = |id: &str| id.split_once(':').map_or(id, |(_, h)| h).to_string();
        let exact: Vec<&ProgramRow> = all.iter().filter(|p| p.identity == pattern).collect();
        let pick = if !exact.is_empty() {
            exact
        } else {
            let by_prefix: Vec<&ProgramRow> = all
                .iter()
                .filter(|p| {
                    pattern.len() >= 4
                        && (p.identity.starts_with(pattern)
                            || hex(&p.identity).starts_with(pattern))
                })
                .collect();
            if by_prefix.is_empty() {
                all.iter().filter(|p| p.name == pattern).collect()
            } else {
                by_prefix
            }
        };
        match pick.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(StoreError::UnknownProgram(pattern.into())),
            many => Err(StoreError::Ambiguous {
                pattern: pattern.into(),
                matches: many
                    .iter()
                    .map(|p| format!("{} ({})", p.identity, p.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A message on one line (database errors may span several).
fn one_line(s: impl std::fmt::Display) -> String {
    s.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_backend() {
        assert_eq!(
            Location::parse("/tmp/x.db").unwrap(),
            Location::Sqlite("/tmp/x.db".into())
        );
        assert_eq!(
            Location::parse("sqlite:rel/x.db").unwrap(),
            Location::Sqlite("rel/x.db".into())
        );
        assert_eq!(
            Location::parse("sqlite:///abs/x.db").unwrap(),
            Location::Sqlite("/abs/x.db".into())
        );
        assert!(matches!(
            Location::parse("postgresql://u@h/db").unwrap(),
            Location::Postgres(_)
        ));
        assert!(Location::parse("mysql://h/db").is_err());
        assert!(Location::parse("").is_err());
        assert!(Location::parse("sqlite:").is_err());
    }

    #[test]
    fn profiles_record_the_url_without_its_password() {
        let opts = crate::options::RunOptions {
            store: Some("postgres://me:secret@db/x".into()),
            ..Default::default()
        };
        assert_eq!(opts.for_profile()["store"], "postgres://me:***@db/x");
        assert_eq!(opts.store.as_deref(), Some("postgres://me:secret@db/x"));
    }

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact("postgres://me:secret@db:5432/x"),
            "postgres://me:***@db:5432/x"
        );
        assert_eq!(
            redact("postgres://db/x?user=me&password=secret"),
            "postgres://db/x?user=me&password=***"
        );
        assert_eq!(redact("/tmp/x.db"), "/tmp/x.db");
    }
}
