//! `evalhost view`: serve the history store as a local web UI on 127.0.0.1 until Ctrl-C or
//! SIGTERM (docs/history.md, "evalhost view").

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use anyhow::{Context, anyhow};

use super::history::StoreArgs;
use super::{Failure, exit};
use crate::history::Location;

/// `evalhost view`.
#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    /// The port to listen on (0: any free port, the default).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,
    /// The address to listen on: a loopback address only (127.0.0.1, the default, or ::1);
    /// any other is refused.
    #[arg(long, value_name = "ADDRESS", default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Open the page in a browser ($BROWSER, else xdg-open); failing to is a warning.
    #[arg(long)]
    pub open: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn view(args: ViewArgs, ui: &super::ui::Ui) -> Result<u8, Failure> {
    if !args.bind.is_loopback() {
        return Err(Failure::usage(anyhow!(
            "--bind {}: evalhost view listens on a loopback address only (127.0.0.1 or ::1); anyone who could reach another address could read every transcript",
            args.bind
        )));
    }
    let location = args.store.location()?;
    if location == Location::Off {
        return Err(Failure::usage(anyhow!(
            "the history is off (EVALHOST_HISTORY=off or [history] store = \"off\"): give --history STORE"
        )));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .context("starting the runtime")
        .map_err(Failure::internal)?;
    runtime.block_on(async move {
        let address = SocketAddr::new(args.bind, args.port);
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("listening on {address}"))
            .map_err(Failure::usage)?;
        let bound = listener
            .local_addr()
            .context("the listener's address")
            .map_err(Failure::internal)?;
        let url = match bound.ip() {
            IpAddr::V4(ip) if ip == Ipv4Addr::LOCALHOST => {
                format!("http://127.0.0.1:{}/", bound.port())
            }
            ip @ IpAddr::V4(_) => format!("http://{ip}:{}/", bound.port()),
            ip @ IpAddr::V6(_) => format!("http://[{ip}]:{}/", bound.port()),
        };
        // The store is opened before the line is printed: a missing store is an error,
        // not a page.
        let server = crate::view::Server::new(location, listener)
            .await
            .map_err(Failure::usage)?;
        println!("Serving the history at {url} (Ctrl-C to stop)");
        if args.open {
            open_browser(&url, ui);
        }
        server
            .run_until(shutdown())
            .await
            .map_err(Failure::internal)?;
        Ok(exit::OK)
    })
}

/// Ctrl-C or SIGTERM.
async fn shutdown() {
    use tokio::signal::unix::{SignalKind, signal};
    let interrupt = signal(SignalKind::interrupt());
    let terminate = signal(SignalKind::terminate());
    match (interrupt, terminate) {
        (Ok(mut interrupt), Ok(mut terminate)) => {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// `$BROWSER URL`, else `xdg-open URL`; a failure is a warning.
fn open_browser(url: &str, ui: &super::ui::Ui) {
    let program = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| "xdg-open".to_owned());
    let started = std::process::Command::new(&program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        eprintln!(
            "{} could not open a browser (`{program}`): {e}; open {url} yourself",
            ui.warning_prefix()
        );
    }
}
