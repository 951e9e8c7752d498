//! Google Gemini (`generateContent`): its wire types (`wire.rs`), the endpoint's codec
//! (`server.rs`), what the endpoint reads out of a request (`request.rs`) and the live
//! provider's client (`client.rs`).
//!
//! Its paths name the model and the method: `POST {base}/v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent` (`?alt=sse` for Server-Sent Events), `:countTokens`; `GET
//! {base}/v1beta/models` and `.../models/{model}`. `v1` and `v1alpha` are served alike.

pub(crate) mod client;
pub(crate) mod request;
pub(crate) mod server;
pub mod wire;

/// What a Gemini path asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// `:generateContent`.
    Generate,
    /// `:streamGenerateContent`.
    StreamGenerate,
    /// `:countTokens`.
    CountTokens,
    /// `GET .../models` or `GET .../models/{model}`.
    Models,
}

/// `path` (below a session, no query string) as a Gemini model and method, if it is one.
pub(crate) fn parse_path(path: &str) -> Option<(&str, Method)> {
    let rest = ["/v1beta/", "/v1/", "/v1alpha/"]
        .iter()
        .find_map(|version| path.strip_prefix(version))?;
    if rest == "models" {
        return Some(("", Method::Models));
    }
    let named = rest.strip_prefix("models/")?;
    let Some((model, method)) = named.rsplit_once(':') else {
        return (!named.is_empty() && !named.contains('/')).then_some((named, Method::Models));
    };
    let method = match method {
        "generateContent" => Method::Generate,
        "streamGenerateContent" => Method::StreamGenerate,
        "countTokens" => Method::CountTokens,
        _ => return None,
    };
    (!model.is_empty()).then_some((model, method))
}

/// Whether `path` looks like Gemini's, served or not (`/v1beta/...`, `/v1alpha/...`, or a
/// `/v1/models/MODEL:METHOD`): an error about it is answered in Google's shape.
pub(crate) fn looks_like(path: &str) -> bool {
    path.starts_with("/v1beta/")
        || path.starts_with("/v1alpha/")
        || path
            .strip_prefix("/v1/models/")
            .is_some_and(|rest| rest.contains(':'))
}

/// Whether `path` (below a session, no query string) is a model request of this API.
pub(crate) fn is_model_path(path: &str) -> bool {
    matches!(
        parse_path(path),
        Some((_, Method::Generate | Method::StreamGenerate))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_the_model_and_the_method() {
        assert_eq!(
            parse_path("/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
            Some(("gemini-2.5-pro", Method::StreamGenerate))
        );
        assert_eq!(
            parse_path("/v1/models/m:generateContent"),
            Some(("m", Method::Generate))
        );
        assert_eq!(
            parse_path("/v1beta/models/m:countTokens"),
            Some(("m", Method::CountTokens))
        );
        assert_eq!(parse_path("/v1beta/models"), Some(("", Method::Models)));
        assert_eq!(parse_path("/v1beta/models/m"), Some(("m", Method::Models)));
        assert_eq!(parse_path("/v1beta/models/m:embedContent"), None);
        assert_eq!(parse_path("/v1beta/models/:generateContent"), None);
        assert_eq!(parse_path("/v1/responses"), None);
        assert!(is_model_path("/v1beta/models/m:generateContent"));
        assert!(!is_model_path("/v1beta/models/m:countTokens"));
    }
}
