//! A throwaway PostgreSQL for tests: `SCHOLIA_TEST_DATABASE_URL`'s server, else a cluster on
//! loopback made with the system's `initdb` and `pg_ctl` (as the `postgres` user when run as
//! root: initdb refuses root), one per test process, stopped and removed at exit. Each test
//! gets a database of its own.

use std::path::PathBuf;
use std::sync::OnceLock;

/// A throwaway cluster on loopback, for the whole test binary.
struct Cluster {
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();

extern "C" fn stop_cluster() {
    if let Some(Some(c)) = CLUSTER.get() {
        let _ = pg_command(c.as_postgres, "pg_ctl")
            .args(["-D", &c.dir.join("data").to_string_lossy(), "-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&c.dir);
    }
}

fn pg_bin(name: &str) -> Option<PathBuf> {
    let mut places: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Ok(versions) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut v: Vec<PathBuf> = versions.flatten().map(|e| e.path().join("bin")).collect();
        v.sort();
        places.extend(v.into_iter().rev());
    }
    places.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// `program` run as the `postgres` user when this process is root (initdb refuses root).
fn pg_command(as_postgres: bool, program: &str) -> std::process::Command {
    let bin = pg_bin(program).unwrap_or_else(|| PathBuf::from(program));
    if as_postgres {
        let mut c = std::process::Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin);
        c
    } else {
        std::process::Command::new(bin)
    }
}

fn start_cluster() -> Option<Cluster> {
    pg_bin("initdb")?;
    // SAFETY: geteuid only reads the process's credentials.
    let as_postgres = unsafe { libc::geteuid() } == 0;
    let dir = std::env::temp_dir().join(format!("scholia-pg-{}-{}", std::process::id(), fastrand::u32(..)));
    std::fs::create_dir_all(&dir).ok()?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).ok()?;
    let data = dir.join("data");
    let init = pg_command(as_postgres, "initdb")
        .args([
            "-D",
            &data.to_string_lossy(),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        ])
        .output()
        .ok()?;
    if !init.status.success() {
        eprintln!("initdb failed: {}", String::from_utf8_lossy(&init.stderr));
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
        dir.display()
    );
    let started = pg_command(as_postgres, "pg_ctl")
        .args([
            "-D",
            &data.to_string_lossy(),
            "-o",
            &options,
            "-l",
            &dir.join("log").to_string_lossy(),
            "-w",
            "start",
        ])
        .output()
        .ok()?;
    if !started.status.success() {
        eprintln!("pg_ctl start failed: {}", String::from_utf8_lossy(&started.stderr));
        return None;
    }
    // SAFETY: registering a plain function to run at exit.
    unsafe { libc::atexit(stop_cluster) };
    Some(Cluster { dir, port, as_postgres })
}

/// A new, empty database for one test, on the cluster (or `SCHOLIA_TEST_DATABASE_URL`'s
/// server); `None` (skipped) without PostgreSQL.
pub async fn fresh_database(name: &str) -> Option<String> {
    let server = match std::env::var("SCHOLIA_TEST_DATABASE_URL") {
        Ok(url) => url,
        Err(_) => match CLUSTER.get_or_init(start_cluster) {
            Some(c) => format!("postgres://postgres@127.0.0.1:{}/postgres?sslmode=disable", c.port),
            None => {
                if std::env::var("SCHOLIA_REQUIRE_E2E").is_ok_and(|v| v == "1") {
                    panic!(
                        "PostgreSQL is missing (install the `postgresql` package): the PostgreSQL store was not tested"
                    );
                }
                eprintln!("skipping the PostgreSQL store's {name}: no PostgreSQL (install the `postgresql` package)");
                return None;
            }
        },
    };
    let db = format!("t_{name}_{}", fastrand::u32(..));
    let (client, conn) = tokio_postgres::connect(&server, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    client.batch_execute(&format!("CREATE DATABASE {db}")).await.unwrap();
    let (base, query) = server.split_once('?').map_or((server.as_str(), ""), |(b, q)| (b, q));
    let base = base.rsplit_once('/').map_or(base, |(b, _)| b);
    Some(match query {
        "" => format!("{base}/{db}"),
        q => format!("{base}/{db}?{q}"),
    })
}
