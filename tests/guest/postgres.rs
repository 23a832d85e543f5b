//! A PostgreSQL server of a test's own (Debian's `postgresql` package), for
//! the profile store's tests (`store.rs`).

use std::path::PathBuf;
use std::process::Command;

/// A PostgreSQL server of our own in a temporary directory, listening on a
/// Unix socket there only; stopped and removed when dropped.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    user: Option<String>,
}

pub fn pg_bin() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    versions.sort();
    versions.pop()
}

impl Postgres {
    pub fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        match &self.user {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    pub fn start() -> Option<Postgres> {
        let Some(bin) = pg_bin() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must install Debian's postgresql package (.ci/run)"
            );
            eprintln!("note: PostgreSQL not installed (Debian package postgresql): PostgreSQL store tests skipped");
            return None;
        };
        // Short: the socket path must fit in 108 bytes.
        let dir = PathBuf::from(format!("/tmp/hlpg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // initdb refuses to run as root: the package's postgres user does.
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let user = root.then(|| "postgres".to_string());
        if root {
            let id = |flag: &str| -> u32 {
                let o = Command::new("id")
                    .args([flag, "postgres"])
                    .output()
                    .unwrap();
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse()
                    .expect("postgres user")
            };
            std::os::unix::fs::chown(&dir, Some(id("-u")), Some(id("-g"))).unwrap();
        }
        let port = 20000 + (std::process::id() % 20000) as u16;
        let pg = Postgres {
            dir,
            bin,
            port,
            user,
        };
        let data = pg.dir.join("data");
        let st = pg
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "hotlift", "--no-sync", "-E", "UTF8"])
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&st.stderr)
        );
        let opts = format!(
            "-k {} -p {} -c listen_addresses='' -c fsync=off -c max_connections=60",
            pg.dir.display(),
            pg.port
        );
        let st = pg
            .command("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(pg.dir.join("log"))
            .args(["-w", "-t", "60", "-o", &opts, "start"])
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "pg_ctl start: {}{}",
            String::from_utf8_lossy(&st.stdout),
            std::fs::read_to_string(pg.dir.join("log")).unwrap_or_default()
        );
        Some(pg)
    }

    /// A database URL on our socket (the directory, percent-encoded).
    pub fn url(&self, db: &str) -> String {
        let host = self.dir.to_str().unwrap().replace('/', "%2F");
        format!("postgresql://hotlift@{host}:{}/{db}", self.port)
    }

    pub fn create_db(&self, db: &str) {
        let st = Command::new("psql")
            .args([
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &self.url("postgres"),
                "-c",
            ])
            .arg(format!("CREATE DATABASE {db}"))
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
