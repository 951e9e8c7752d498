//! What every request passes before a page is made, and the headers every response carries.
//!
//! - The `Host` header (and an absolute-form request target's authority) must name the
//!   address served: `127.0.0.1:PORT` or `localhost:PORT` (`[::1]:PORT` on IPv6). A page
//!   of another site that resolves its own name to 127.0.0.1 (DNS rebinding) sends its own
//!   name as `Host` and is refused with 421 Misdirected Request.
//! - Only `GET` and `HEAD`: the view is read-only; anything else is 405 with `Allow`.
//! - Every response: a Content-Security-Policy that allows the server's own stylesheet and
//!   icon and nothing else (no script at all, no inline style, no frame, no form posting
//!   elsewhere), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
//!   `X-Frame-Options: DENY`, and no caching of pages.

use std::net::SocketAddr;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;

/// The policy of every response.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The `Host` values a request may carry.
pub(crate) struct Guard {
    allowed: Vec<String>,
}

impl Guard {
    pub(crate) fn new(address: SocketAddr) -> Self {
        let port = address.port();
        let mut allowed = vec![format!("localhost:{port}")];
        match address {
            SocketAddr::V4(v4) => allowed.push(format!("{}:{port}", v4.ip())),
            SocketAddr::V6(v6) => allowed.push(format!("[{}]:{port}", v6.ip())),
        }
        Self { allowed }
    }

    /// The refusal of a request that may not be answered; `None` for one that may.
    pub(crate) fn check(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Option<Response> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase);
        let host_ok = host.as_deref().is_some_and(|h| self.allows(h))
            && uri
                .authority()
                .is_none_or(|a| self.allows(&a.as_str().to_ascii_lowercase()));
        if !host_ok {
            return Some(respond(
                StatusCode::MISDIRECTED_REQUEST,
                "text/plain; charset=utf-8",
                format!(
                    "421 Misdirected Request: this server answers only requests for {}\n",
                    self.allowed.join(" or ")
                )
                .into_bytes(),
                *method == Method::HEAD,
            ));
        }
        if *method != Method::GET && *method != Method::HEAD {
            let mut response = respond(
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain; charset=utf-8",
                b"405 Method Not Allowed: evalhost view is read-only (GET and HEAD only)\n"
                    .to_vec(),
                false,
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return Some(response);
        }
        None
    }

    fn allows(&self, host: &str) -> bool {
        self.allowed.iter().any(|a| a == host)
    }
}

/// A response with the view's headers (`head`: without its body).
pub(crate) fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: Vec<u8>,
    head: bool,
) -> Response {
    let length = body.len();
    let mut response = Response::new(if head {
        Body::empty()
    } else {
        Body::from(body)
    });
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if content_type.starts_with("text/html") {
            "no-store"
        } else {
            "no-cache"
        }),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(guard: &Guard, method: Method, uri: &str, host: Option<&str>) -> Option<StatusCode> {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        }
        guard
            .check(&method, &uri.parse().unwrap(), &headers)
            .map(|r| r.status())
    }

    #[test]
    fn only_the_served_address_and_reads_pass() {
        let guard = Guard::new("127.0.0.1:8123".parse().unwrap());
        assert_eq!(
            check(&guard, Method::GET, "/", Some("127.0.0.1:8123")),
            None
        );
        assert_eq!(
            check(&guard, Method::HEAD, "/", Some("LocalHost:8123")),
            None
        );
        for host in [
            Some("evil.example:8123"),
            Some("127.0.0.1:8124"),
            Some("127.0.0.1"),
            Some("localhost"),
            None,
        ] {
            assert_eq!(
                check(&guard, Method::GET, "/", host),
                Some(StatusCode::MISDIRECTED_REQUEST),
                "{host:?}"
            );
        }
        assert_eq!(
            check(
                &guard,
                Method::GET,
                "http://evil.example:8123/",
                Some("127.0.0.1:8123")
            ),
            Some(StatusCode::MISDIRECTED_REQUEST)
        );
        for method in [Method::POST, Method::PUT, Method::DELETE, Method::OPTIONS] {
            assert_eq!(
                check(&guard, method, "/", Some("127.0.0.1:8123")),
                Some(StatusCode::METHOD_NOT_ALLOWED)
            );
        }
    }
}
