//! `evalhost view`: a local web UI over the history store, served by the binary itself
//! (docs/history.md, "evalhost view").
//!
//! Server-rendered pages, every asset compiled in (`assets/`), no script:
//!
//! | route | page |
//! |---|---|
//! | `/` | the runs, newest first, filtered (branch, model, agent, case), paged ([`runs`]) |
//! | `/runs/{id}` | a run: its provenance, its cases failures first, filtered, searched, paged ([`run`]) |
//! | `/runs/{id}/cases/{name}` | one case of a run: each run's verdicts, transcript, workspace diff ([`case`]) |
//! | `/cases/{name}` | a case across runs: its pass-rate trend, flips and digest changes ([`history`]) |
//! | `/compare?a=RUN&b=RUN` | `evalhost compare`'s table; `/compare/case` two transcripts side by side ([`compare`]) |
//!
//! Security ([`guard`]): loopback only; `GET`/`HEAD` only (else 405); a `Host` that is not the
//! address served is refused (421, DNS rebinding); no path from a request reaches the file
//! system (a request's path only selects a page or a compiled-in asset); everything a run
//! wrote is escaped (`crate::report::escape`); a Content-Security-Policy allows nothing but
//! the server's own stylesheet and icon.
//!
//! Store access: every page's queries run on the blocking pool ([`pool`]), each on a
//! connection of a small pool, so a slow store (or PostgreSQL's synchronous client) never
//! holds an async worker.

mod case;
mod compare;
mod guard;
mod history;
mod page;
mod pool;
mod run;
mod runs;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;

use crate::history::{Location, StoreError};
use page::{Page, PageError};
use pool::Pool;

/// Why the view could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(
        "evalhost view serves only the loopback interface (127.0.0.1 or ::1), not {0}: anyone who can reach another address could read every transcript"
    )]
    NotLoopback(SocketAddr),
    #[error("the history is off: give --history STORE")]
    Off,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("evalhost view: {0}")]
    Io(#[from] std::io::Error),
}

/// What every request shares.
pub(crate) struct Served {
    pool: Arc<Pool>,
    guard: guard::Guard,
}

/// A view ready to serve: its address checked and its store opened.
pub struct Server {
    listener: tokio::net::TcpListener,
    app: Router,
}

impl Server {
    /// Check that `listener` is on a loopback address and open the store at `location`
    /// (which must exist).
    pub async fn new(
        location: Location,
        listener: tokio::net::TcpListener,
    ) -> Result<Self, ViewError> {
        if location == Location::Off {
            return Err(ViewError::Off);
        }
        let address = listener.local_addr()?;
        if !address.ip().is_loopback() {
            return Err(ViewError::NotLoopback(address));
        }
        let pool = Arc::new(Pool::new(location));
        pool.warm().await?;
        let served = Arc::new(Served {
            pool,
            guard: guard::Guard::new(address),
        });
        Ok(Self {
            listener,
            app: Router::new().fallback(handle).with_state(served),
        })
    }

    /// Serve until `shutdown` completes; requests in flight are answered first.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ViewError> {
        axum::serve(self.listener, self.app)
            .with_graceful_shutdown(shutdown)
            .await?;
        Ok(())
    }
}

/// Every request: the guard's checks, then the route.
async fn handle(
    State(served): State<Arc<Served>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = served.guard.check(&method, &uri, &headers) {
        return refused;
    }
    let head = method == Method::HEAD;
    let path = uri.path();
    let query = page::Query::parse(uri.query().unwrap_or(""));
    if let Some(asset) = page::asset(path) {
        return guard::respond(StatusCode::OK, asset.0, asset.1.as_bytes().to_vec(), head);
    }
    let Some(route) = Route::of(path) else {
        return respond_page(
            Err(PageError::NotFound(format!(
                "There is no page at {}.",
                page::shown_path(path)
            ))),
            head,
        );
    };
    let result = served
        .pool
        .run(move |store| match route {
            Route::Runs => runs::page(store, &query),
            Route::Run(id) => run::page(store, &id, &query),
            Route::RunCase(id, name) => case::page(store, &id, &name),
            Route::CaseHistory(name) => history::page(store, &name),
            Route::Compare => compare::page(store, &query),
            Route::CompareCase => compare::case_page(store, &query),
        })
        .await;
    respond_page(result, head)
}

fn respond_page(result: Result<Page, PageError>, head: bool) -> Response {
    let (status, page) = match result {
        Ok(page) => (StatusCode::OK, page),
        Err(error) => error.page(),
    };
    guard::respond(
        status,
        "text/html; charset=utf-8",
        page.into_html().into_bytes(),
        head,
    )
}

/// The pages, by path (segments percent-decoded; `/` inside a name is `%2F`).
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Runs,
    Run(String),
    RunCase(String, String),
    CaseHistory(String),
    Compare,
    CompareCase,
}

impl Route {
    fn of(path: &str) -> Option<Route> {
        let segments: Vec<String> = path
            .strip_prefix('/')?
            .split('/')
            .map(page::percent_decode)
            .collect();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        Some(match segments.as_slice() {
            [""] => Route::Runs,
            ["runs", id] if !id.is_empty() => Route::Run((*id).to_owned()),
            ["runs", id, "cases", name] if !id.is_empty() && !name.is_empty() => {
                Route::RunCase((*id).to_owned(), (*name).to_owned())
            }
            ["cases", name] if !name.is_empty() => Route::CaseHistory((*name).to_owned()),
            ["compare"] => Route::Compare,
            ["compare", "case"] => Route::CompareCase,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_decode_their_segments_and_refuse_the_rest() {
        assert_eq!(Route::of("/"), Some(Route::Runs));
        assert_eq!(Route::of("/runs/ab12"), Some(Route::Run("ab12".into())));
        assert_eq!(
            Route::of("/runs/latest/cases/a%2Fb%20c"),
            Some(Route::RunCase("latest".into(), "a/b c".into()))
        );
        assert_eq!(
            Route::of("/cases/%3Cx%3E"),
            Some(Route::CaseHistory("<x>".into()))
        );
        for path in [
            "/../../etc/passwd",
            "/runs/",
            "/runs/a/b",
            "/assets/..%2f..%2fetc%2fpasswd",
            "/cases/",
            "//",
            "",
        ] {
            assert_eq!(Route::of(path), None, "{path}");
        }
    }
}
