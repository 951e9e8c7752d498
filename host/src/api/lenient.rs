//! Reading a provider's answer leniently: servers and gateways differ, and a field evalhost
//! cannot read must not fail the answer. Every API's wire types use it on the way in.

use serde::Deserializer;
use serde::de::{Deserialize, DeserializeOwned};
use serde_json::Value;

/// A field that is `null`, or not of its type, reads as its default, as a missing one does
/// (`#[serde(default, deserialize_with = "crate::api::lenient::lenient")]`).
pub(crate) fn lenient<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(T::deserialize(Value::deserialize(deserializer)?).unwrap_or_default())
}
