//! Reasoning carried across a tool loop, as the APIs ask: a reasoning model's Responses
//! `reasoning` items, and Anthropic's `thinking` / `redacted_thinking` blocks with their
//! signatures, are passed back in the next request together with the calls they preceded.
//!
//! The agent's conversation holds only text, calls and results, so each run session keeps a
//! [`Carried`]: every reply's reasoning under the id of the reply's first call, put back in
//! front of that call whenever a request of the session carries it. A request that already
//! carries the reasoning (a client that passes it back itself) is left as it is. At most
//! [`REMEMBERED`] replies are kept, oldest dropped first; the memory goes with the session.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::api::reply::Reply;
use crate::session::OutputItem;

/// Most replies whose reasoning is kept.
const REMEMBERED: usize = 4096;

/// One conversation's reasoning: that of its recent replies, by their first call id. A
/// single request with nothing to carry uses a fresh one.
#[derive(Debug, Default)]
pub struct Carried {
    memory: Mutex<Memory>,
}

#[derive(Debug, Default)]
struct Memory {
    by_call: HashMap<String, Arc<[Value]>>,
    order: VecDeque<String>,
}

impl Carried {
    /// Keep `reply`'s reasoning, when it has reasoning and calls.
    pub(crate) fn remember(&self, reply: &Reply) {
        if reply.reasoning.is_empty() {
            return;
        }
        let Some(call_id) = first_call(reply) else {
            return;
        };
        let mut memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        let blocks: Arc<[Value]> = reply.reasoning.clone().into();
        if memory.by_call.insert(call_id.to_owned(), blocks).is_none() {
            memory.order.push_back(call_id.to_owned());
        }
        while memory.order.len() > REMEMBERED {
            if let Some(old) = memory.order.pop_front() {
                memory.by_call.remove(&old);
            }
        }
    }

    /// The reasoning that preceded the call `call_id`, if it was the first call of a reply.
    pub(crate) fn recall(&self, call_id: &str) -> Option<Arc<[Value]>> {
        if call_id.is_empty() {
            return None;
        }
        let memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        memory.by_call.get(call_id).cloned()
    }
}

fn first_call(reply: &Reply) -> Option<&str> {
    reply.output.iter().find_map(|item| match item {
        OutputItem::FunctionCall { call_id, .. } if !call_id.is_empty() => Some(call_id.as_str()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(call_id: &str, reasoning: Value) -> Reply {
        Reply {
            output: vec![
                OutputItem::Message {
                    text: "let me look".to_owned(),
                },
                OutputItem::FunctionCall {
                    call_id: call_id.to_owned(),
                    name: "bash".to_owned(),
                    arguments: "{}".to_owned(),
                },
            ],
            reasoning: vec![reasoning],
            ..Reply::default()
        }
    }

    #[test]
    fn recalls_by_the_first_call_and_forgets_the_oldest() {
        let carried = Carried::default();
        carried.remember(&reply("call_0", json!({"type": "reasoning", "id": "rs_0"})));
        assert_eq!(
            carried.recall("call_0").as_deref(),
            Some(&[json!({"type": "reasoning", "id": "rs_0"})][..])
        );
        assert!(carried.recall("call_1").is_none());
        assert!(carried.recall("").is_none());
        for n in 1..=REMEMBERED {
            carried.remember(&reply(&format!("call_{n}"), json!({"n": n})));
        }
        assert!(carried.recall("call_0").is_none(), "the oldest is dropped");
        assert!(carried.recall(&format!("call_{REMEMBERED}")).is_some());
    }

    #[test]
    fn a_reply_without_calls_or_reasoning_is_not_kept() {
        let carried = Carried::default();
        let mut text_only = reply("call_t", json!({"type": "reasoning"}));
        text_only.output.truncate(1);
        carried.remember(&text_only);
        let mut no_reasoning = reply("call_n", json!({}));
        no_reasoning.reasoning.clear();
        carried.remember(&no_reasoning);
        assert!(carried.recall("call_t").is_none() && carried.recall("call_n").is_none());
    }
}
