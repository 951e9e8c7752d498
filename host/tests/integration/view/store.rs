//! What the view's tests share: a history store made by the real binary on real suites, and
//! `evalhost view` started on it as a child process, spoken to over plain HTTP.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::support::evalhost::Evalhost;

/// A prompt and a model reply full of markup an agent could write.
pub const HOSTILE_PROMPT: &str =
    "Print </script><script>window.pwned=1</script> & <img src=x onerror=alert(1)>";
pub const HOSTILE_REPLY: &str = "Done <b id=\"pwned\">bold</b> <script>window.pwned=2</script>";
/// What the passing case's scripted model says (the browser looks for it in the transcript).
pub const GREETING: &str = "Hello from the scripted model, run recorded";

/// A store with three runs: `cases/mino` (all pass), then `suite/` twice: `greet` passes
/// both times, `markup` (hostile markup) fails both times, `flipper` passes in the first and
/// fails in the second (its file changed between them).
pub struct Store {
    pub _dir: tempfile::TempDir,
    pub db: PathBuf,
    pub mino: String,
    pub first: String,
    pub second: String,
}

fn case(dir: &Path, file: &str, text: &str) {
    std::fs::write(dir.join(file), text).unwrap();
}

fn flipper(says: &str) -> String {
    format!(
        "name: flipper\nprompt: Say ok.\ntags: [flaky-ish]\nmodel:\n  - text: \"{says}\"\ngraders:\n  - final_text_contains: ok\n"
    )
}

/// `evalhost run --history DB ARGS`, which must exit `code`; the recorded run's id.
fn record(db: &Path, args: &[&str], code: i32) -> String {
    let output = Evalhost::new()
        .arg("run")
        .arg("--history")
        .arg(db)
        .args(args)
        .run();
    output.assert_code(code);
    let line = output
        .stdout()
        .lines()
        .find(|l| l.starts_with("Recorded as run "))
        .unwrap_or_else(|| panic!("the run says where it was recorded\n{output}"))
        .to_owned();
    line["Recorded as run ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

impl Store {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let suite = dir.path().join("suite");
        std::fs::create_dir_all(&suite).unwrap();
        case(
            &suite,
            "greet.yaml",
            &format!(
                "name: greet\nprompt: Say hello.\ntags: [smoke]\nmodel:\n  - text: \"{GREETING}\"\ngraders:\n  - final_text_contains: Hello\n"
            ),
        );
        case(
            &suite,
            "markup.yaml",
            &format!(
                "name: markup\nprompt: {}\nmodel:\n  - text: {}\ngraders:\n  - final_text_contains: never said\n",
                serde_json::to_string(HOSTILE_PROMPT).unwrap(),
                serde_json::to_string(HOSTILE_REPLY).unwrap()
            ),
        );
        case(&suite, "flipper.yaml", &flipper("ok then"));
        let mino = record(&db, &["cases/mino"], 0);
        let suite_arg = suite.to_str().unwrap();
        let first = record(&db, &[suite_arg], 1);
        case(&suite, "flipper.yaml", &flipper("no then"));
        let second = record(&db, &[suite_arg], 1);
        Self {
            _dir: dir,
            db,
            mino,
            first,
            second,
        }
    }
}

/// `evalhost view` running on a store; killed when dropped.
pub struct View {
    child: Child,
    pub url: String,
    pub port: u16,
}

impl View {
    /// `evalhost view --port 0 --history DB ARGS`, once it says where it serves.
    pub fn start(db: &Path, args: &[&str]) -> Self {
        let mut child = Evalhost::new()
            .args(["view", "--port", "0", "--history"])
            .arg(db)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some(rest) = line.strip_prefix("Serving the history at http://127.0.0.1:") else {
            let _ = child.kill();
            let mut stderr = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
            panic!("evalhost view did not say where it serves: {line:?}\nstderr: {stderr}");
        };
        assert!(line.ends_with("/ (Ctrl-C to stop)\n"), "{line:?}");
        let port: u16 = rest.split('/').next().unwrap().parse().unwrap();
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/"),
            port,
        }
    }

    /// `METHOD TARGET` with `Host: HOST` (the served address when `None`), the request
    /// target sent as it is.
    pub fn request(&self, method: &str, target: &str, host: Option<&str>) -> Response {
        let host = host.map_or_else(|| format!("127.0.0.1:{}", self.port), str::to_owned);
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        )
        .unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        let mut lines = head.lines();
        let status: u16 = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {raw:?}"));
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        Response {
            status,
            headers,
            body: body.to_owned(),
        }
    }

    pub fn get(&self, target: &str) -> Response {
        self.request("GET", target, None)
    }
}

impl Drop for View {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body: String = self.body.chars().take(2000).collect();
        write!(f, "HTTP {} {:?}\n{body}", self.status, self.headers)
    }
}
