//! Where exported runs go (docs/traces.md, "OTLP out"): an OTLP/HTTP collector (`--otlp URL`,
//! `OTEL_EXPORTER_OTLP_*`), a file of OTLP JSON lines (`--otel-file PATH`), or both.
//!
//! The runner hands each finished run's spans over from its grading thread; nothing waits for
//! the collector there. A task sends them in batches; the first failure (refused, timed out, a
//! status other than 2xx) stops sending, and what was not sent is counted. The suite's end waits
//! for the last batch at most the export timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s by
//! default), so an unreachable or hanging collector costs the suite at most that once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::ResourceSpans;
use prost::Message;
use tokio::sync::mpsc;

use crate::spool_file::SpoolFile;

/// Runs sent in one request at most.
const BATCH_RUNS: usize = 64;
/// The export timeout when `OTEL_EXPORTER_OTLP_TIMEOUT` sets none (the SDKs' default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The body's encoding on the wire (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf` (the default).
    Protobuf,
    /// `http/json`.
    Json,
}

/// Why the export's settings are refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportConfigError {
    /// The collector's URL is not an http:// or https:// URL.
    #[error(
        "{source_name}: `{url}` is not an http:// or https:// URL of an OTLP/HTTP collector (e.g. http://127.0.0.1:4318)"
    )]
    Url {
        /// Where the URL came from: `--otlp` or the variable's name.
        source_name: String,
        /// The URL as given.
        url: String,
    },
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` names a protocol evalhost does not speak; its value.
    #[error(
        "OTEL_EXPORTER_OTLP_PROTOCOL is `{0}`: evalhost exports OTLP over HTTP, `http/protobuf` (the default) or `http/json`, not gRPC"
    )]
    Protocol(String),
    /// An `OTEL_EXPORTER_OTLP_*` variable's value is refused.
    #[error("{name} is `{value}`: {why}")]
    Variable {
        /// The variable.
        name: &'static str,
        /// Its value (not shown for the headers, which may hold a key).
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The spool file that gathers `--otel-file`'s lines could not be made.
    #[error("--otel-file `{path}`: {source}")]
    File {
        /// The `--otel-file` path.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
}

/// Where and how runs are exported.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportConfig {
    /// The collector's traces URL (`…/v1/traces`).
    pub url: Option<String>,
    /// The body's encoding (`OTEL_EXPORTER_OTLP_PROTOCOL`).
    pub protocol: Protocol,
    /// Headers of every request (`OTEL_EXPORTER_OTLP_HEADERS`: an API key of the backend).
    pub headers: Vec<(String, String)>,
    /// The bound of one request, and of the wait for the last batch at the suite's end.
    pub timeout: Duration,
    /// A file of OTLP JSON lines, one `ExportTraceServiceRequest` per run.
    pub file: Option<PathBuf>,
}

impl ExportConfig {
    /// The settings of `--otlp URL` (`otlp`) and `--otel-file PATH` (`file`) with the
    /// OpenTelemetry SDKs' variables (`var`): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as
    /// is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended) when `--otlp` gives none,
    /// `…_HEADERS`, `…_TIMEOUT` (milliseconds), `…_PROTOCOL`. `None`: nothing to export.
    pub fn resolve(
        otlp: Option<&str>,
        file: Option<&Path>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ExportConfigError> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        // The SDKs' switches: the variables' endpoint is not used when traces are off.
        let disabled = var("OTEL_SDK_DISABLED")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim() == "none");
        let url = match otlp {
            Some(url) => Some(traces_url("--otlp", url, true)?),
            None if disabled => None,
            None => match var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
                Some(url) => Some(traces_url(
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    &url,
                    false,
                )?),
                None => var("OTEL_EXPORTER_OTLP_ENDPOINT")
                    .map(|url| traces_url("OTEL_EXPORTER_OTLP_ENDPOINT", &url, true))
                    .transpose()?,
            },
        };
        if url.is_none() && file.is_none() {
            return Ok(None);
        }
        let protocol = match var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .as_deref()
            .map(str::trim)
        {
            None | Some("http/protobuf") => Protocol::Protobuf,
            Some("http/json") => Protocol::Json,
            Some(other) => return Err(ExportConfigError::Protocol(other.to_owned())),
        };
        let headers = match var("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
            .or_else(|| var("OTEL_EXPORTER_OTLP_HEADERS"))
        {
            Some(list) => parse_headers(&list)?,
            None => Vec::new(),
        };
        let timeout = match var("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .or_else(|| var("OTEL_EXPORTER_OTLP_TIMEOUT"))
        {
            Some(ms) => match ms.trim().parse::<u64>() {
                Ok(ms) if ms > 0 => Duration::from_millis(ms),
                _ => {
                    return Err(ExportConfigError::Variable {
                        name: "OTEL_EXPORTER_OTLP_TIMEOUT",
                        value: ms,
                        why: "not a positive number of milliseconds",
                    });
                }
            },
            None => DEFAULT_TIMEOUT,
        };
        Ok(Some(Self {
            url,
            protocol,
            headers,
            timeout,
            file: file.map(Path::to_owned),
        }))
    }
}

/// The traces URL of `url`: as is when it already ends in `/v1/traces` or `append` is off
/// (a signal's own endpoint variable), else with `/v1/traces` appended (a base URL).
fn traces_url(source_name: &str, url: &str, append: bool) -> Result<String, ExportConfigError> {
    let url = url.trim();
    let parsed = reqwest::Url::parse(url).map_err(|_| ExportConfigError::Url {
        source_name: source_name.to_owned(),
        url: url.to_owned(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(ExportConfigError::Url {
            source_name: source_name.to_owned(),
            url: url.to_owned(),
        });
    }
    if !append || parsed.path().ends_with("/v1/traces") {
        return Ok(url.to_owned());
    }
    Ok(format!("{}/v1/traces", url.trim_end_matches('/')))
}

/// `key1=value1,key2=value2`, values percent-decoded (the SDKs' format).
fn parse_headers(list: &str) -> Result<Vec<(String, String)>, ExportConfigError> {
    let bad = |why| ExportConfigError::Variable {
        name: "OTEL_EXPORTER_OTLP_HEADERS",
        value: "(not shown: it may hold a key)".to_owned(),
        why,
    };
    list.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| bad("a header is not `key=value`"))?;
            let value = percent_decode(value.trim()).ok_or_else(|| bad("a bad %-escape"))?;
            let key = key.trim();
            reqwest::header::HeaderName::from_bytes(key.as_bytes())
                .map_err(|_| bad("a header name is not a valid HTTP header name"))?;
            reqwest::header::HeaderValue::from_str(&value)
                .map_err(|_| bad("a header value is not a valid HTTP header value"))?;
            Ok((key.to_owned(), value))
        })
        .collect()
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What the export did, said once at the suite's end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// `Exported 12 runs as OpenTelemetry traces to URL` / `… to FILE`.
    pub lines: Vec<String>,
    /// What failed: the collector's error and how many runs were not sent; a file not written.
    pub warnings: Vec<String>,
}

/// The export of a suite's runs.
#[derive(Debug)]
pub struct Exporter {
    config: ExportConfig,
    sender: Mutex<Option<mpsc::UnboundedSender<ResourceSpans>>>,
    task: Mutex<Option<tokio::task::JoinHandle<Sent>>>,
    /// `--otel-file`'s lines until the suite's end (an unnamed temp file: flat memory).
    file: Option<Mutex<FileLines>>,
}

#[derive(Debug)]
struct FileLines {
    spool: SpoolFile,
    /// Bytes written to `spool`.
    len: u64,
    runs: usize,
    error: Option<String>,
}

/// What the sending task did.
#[derive(Debug, Default)]
struct Sent {
    runs: usize,
    /// The first failure, and the runs not sent from then on.
    failure: Option<String>,
    dropped: usize,
}

impl Exporter {
    /// Start exporting as `config` says: the sending task on `runtime`.
    pub fn start(
        config: ExportConfig,
        runtime: &tokio::runtime::Handle,
    ) -> Result<Arc<Self>, ExportConfigError> {
        let file = match &config.file {
            Some(path) => {
                let spool = SpoolFile::new().map_err(|source| ExportConfigError::File {
                    path: path.clone(),
                    source,
                })?;
                Some(Mutex::new(FileLines {
                    spool,
                    len: 0,
                    runs: 0,
                    error: None,
                }))
            }
            None => None,
        };
        let (sender, task) = match &config.url {
            Some(url) => {
                let (sender, receiver) = mpsc::unbounded_channel();
                let client = client(&config);
                let task = runtime.spawn(send_all(client, url.clone(), config.clone(), receiver));
                (Some(sender), Some(task))
            }
            None => (None, None),
        };
        Ok(Arc::new(Self {
            config,
            sender: Mutex::new(sender),
            task: Mutex::new(task),
            file,
        }))
    }

    /// A run is over: its trace goes out (never blocks on the collector).
    pub fn run_finished(&self, spans: ResourceSpans) {
        if let Some(file) = &self.file {
            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
            if file.error.is_none() {
                let request = ExportTraceServiceRequest {
                    resource_spans: vec![spans.clone()],
                };
                let written = serde_json::to_vec(&request)
                    .map_err(std::io::Error::from)
                    .and_then(|mut line| {
                        line.push(b'\n');
                        file.spool.append(&line).map(|_| line.len() as u64)
                    });
                match written {
                    Ok(len) => {
                        file.runs += 1;
                        file.len += len;
                    }
                    Err(e) => file.error = Some(e.to_string()),
                }
            }
        }
        let sender = self.sender.lock().ok().and_then(|s| s.clone());
        if let Some(sender) = sender {
            // A task that stopped counts nothing more; its failure is already recorded.
            let _ = sender.send(spans);
        }
    }

    /// The suite is over: send what is left (waiting at most the export timeout) and write
    /// the file. Never fails: what went wrong is in the summary's warnings.
    pub async fn finish(&self) -> ExportSummary {
        let mut summary = ExportSummary::default();
        if let Ok(mut sender) = self.sender.lock() {
            sender.take();
        }
        let task = self.task.lock().ok().and_then(|mut t| t.take());
        if let (Some(task), Some(url)) = (task, &self.config.url) {
            let abort = task.abort_handle();
            let wait = self.config.timeout + Duration::from_secs(1);
            match tokio::time::timeout(wait, task).await {
                Ok(Ok(sent)) => {
                    if sent.runs > 0 || sent.failure.is_none() {
                        summary.lines.push(format!(
                            "Exported {} as OpenTelemetry traces to {url}",
                            runs(sent.runs)
                        ));
                    }
                    if let Some(failure) = sent.failure {
                        summary.warnings.push(format!(
                            "OpenTelemetry export to {url} failed: {failure} ({} not exported)",
                            runs(sent.dropped)
                        ));
                    }
                }
                Ok(Err(join)) => summary
                    .warnings
                    .push(format!("OpenTelemetry export to {url} failed: {join}")),
                Err(_) => {
                    abort.abort();
                    summary.warnings.push(format!(
                        "OpenTelemetry export to {url} did not finish within {} s; the runs not yet sent were not exported",
                        wait.as_secs()
                    ));
                }
            }
        }
        if let (Some(file), Some(path)) = (&self.file, &self.config.file) {
            let file = file.lock().unwrap_or_else(|e| e.into_inner());
            let written = match &file.error {
                Some(error) => Err(error.clone()),
                None => write_spooled(path, &file.spool, file.len).map_err(|e| e.to_string()),
            };
            match written {
                Ok(()) => summary.lines.push(format!(
                    "Wrote {} as OpenTelemetry traces (OTLP JSON lines) to {}",
                    runs(file.runs),
                    path.display()
                )),
                Err(error) => summary.warnings.push(format!(
                    "--otel-file `{}` was not written: {error}",
                    path.display()
                )),
            }
        }
        summary
    }
}

fn runs(n: usize) -> String {
    if n == 1 {
        "1 run".to_owned()
    } else {
        format!("{n} runs")
    }
}

/// Copy the spooled lines to `path` (private and atomic, as every report file).
fn write_spooled(path: &Path, spool: &SpoolFile, len: u64) -> std::io::Result<()> {
    crate::private_file::write_with(path, |out| {
        let mut offset = 0u64;
        while offset < len {
            let chunk = spool.read_at(offset, (len - offset).min(1 << 20) as usize)?;
            offset += chunk.len() as u64;
            out.write_all(&chunk)?;
        }
        Ok(())
    })
}

fn client(config: &ExportConfig) -> reqwest::Client {
    crate::tls::install_crypto_provider();
    let mut headers = reqwest::header::HeaderMap::new();
    for (key, value) in &config.headers {
        if let (Ok(key), Ok(value)) = (
            reqwest::header::HeaderName::from_bytes(key.as_bytes()),
            reqwest::header::HeaderValue::from_str(value),
        ) {
            headers.insert(key, value);
        }
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .timeout(config.timeout)
        .connect_timeout(config.timeout)
        .build()
        .unwrap_or_default()
}

/// Send every run received, in batches, until the channel closes; after the first failure,
/// count instead of sending.
async fn send_all(
    client: reqwest::Client,
    url: String,
    config: ExportConfig,
    mut receiver: mpsc::UnboundedReceiver<ResourceSpans>,
) -> Sent {
    let mut sent = Sent::default();
    while let Some(first) = receiver.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH_RUNS {
            match receiver.try_recv() {
                Ok(spans) => batch.push(spans),
                Err(_) => break,
            }
        }
        if sent.failure.is_some() {
            sent.dropped += batch.len();
            continue;
        }
        let n = batch.len();
        match post(&client, &url, config.protocol, batch).await {
            Ok(()) => sent.runs += n,
            Err(failure) => {
                sent.failure = Some(failure);
                sent.dropped += n;
            }
        }
    }
    sent
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    protocol: Protocol,
    batch: Vec<ResourceSpans>,
) -> Result<(), String> {
    let request = ExportTraceServiceRequest {
        resource_spans: batch,
    };
    let (content_type, body) = match protocol {
        Protocol::Protobuf => ("application/x-protobuf", request.encode_to_vec()),
        Protocol::Json => (
            "application/json",
            serde_json::to_vec(&request).map_err(|e| e.to_string())?,
        ),
    };
    let response = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, content_type)
        .body(body)
        .send()
        .await
        .map_err(|e| crate::message::error_chain(&e))?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let body = response.text().await.unwrap_or_default();
    Err(format!(
        "the collector answered {status}: {}",
        crate::message::excerpt(&body, 200)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(
        otlp: Option<&str>,
        vars: &[(&str, &str)],
    ) -> Result<Option<ExportConfig>, ExportConfigError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        ExportConfig::resolve(otlp, None, |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    fn url(otlp: Option<&str>, vars: &[(&str, &str)]) -> Option<String> {
        resolve(otlp, vars).unwrap().and_then(|c| c.url)
    }

    /// A base URL gets `/v1/traces`; a signal's own endpoint, or a URL ending with it, is
    /// used as it is; `--otlp` comes before the variables.
    #[test]
    fn the_traces_url_follows_the_sdks_rules() {
        let traces = Some("http://c:4318/v1/traces".to_owned());
        assert_eq!(url(Some("http://c:4318"), &[]), traces);
        assert_eq!(url(Some("http://c:4318/"), &[]), traces);
        assert_eq!(url(Some("http://c:4318/v1/traces"), &[]), traces);
        assert_eq!(
            url(
                None,
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://o.example/otlp")]
            ),
            Some("https://o.example/otlp/v1/traces".to_owned())
        );
        assert_eq!(
            url(
                None,
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                    ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:9/custom"),
                ]
            ),
            Some("http://b:9/custom".to_owned())
        );
        assert_eq!(
            url(
                Some("http://c:4318"),
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1")]
            ),
            traces
        );
        assert!(resolve(None, &[]).unwrap().is_none());
    }

    /// The SDKs' switches turn the variables' export off, not an explicit `--otlp`.
    #[test]
    fn a_disabled_sdk_exports_nothing_from_the_variables() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318");
        assert_eq!(url(None, &[endpoint, ("OTEL_SDK_DISABLED", "true")]), None);
        assert_eq!(
            url(None, &[endpoint, ("OTEL_TRACES_EXPORTER", "none")]),
            None
        );
        assert!(url(Some("http://c:1"), &[("OTEL_SDK_DISABLED", "true")]).is_some());
    }

    /// Headers are `key=value` pairs with %-escapes; the timeout is in milliseconds; the
    /// protocol is protobuf unless told JSON; gRPC and bad values are refused, naming them.
    #[test]
    fn headers_timeout_and_protocol() {
        let config = resolve(
            Some("http://c:4318"),
            &[
                ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b, x-team=evals"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            config.headers,
            [
                ("api-key".to_owned(), "a b".to_owned()),
                ("x-team".to_owned(), "evals".to_owned())
            ]
        );
        assert_eq!(config.timeout, Duration::from_millis(2500));
        assert_eq!(config.protocol, Protocol::Json);
        let refused =
            |vars: &[(&str, &str)]| resolve(Some("http://c:1"), vars).unwrap_err().to_string();
        assert!(refused(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).contains("not gRPC"));
        assert!(refused(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]).contains("milliseconds"));
        let header = refused(&[("OTEL_EXPORTER_OTLP_HEADERS", "secret-without-equals")]);
        assert!(header.contains("not `key=value`"), "{header}");
        assert!(
            !header.contains("secret"),
            "a header's value is never shown: {header}"
        );
        assert!(
            resolve(Some("ftp://c"), &[])
                .unwrap_err()
                .to_string()
                .contains("--otlp: `ftp://c`")
        );
    }
}
