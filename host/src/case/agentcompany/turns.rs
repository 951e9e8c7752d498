//! The turn sequence: indexes strictly increasing from 0, a user turn first, a token ledger
//! on every assistant turn, every tool call answered before the next assistant or user turn,
//! every later user turn right after an assistant answer without calls, and a final assistant
//! answer. What the replay serves comes out of it.

use std::path::Path;

use super::invalid;
use super::lines::TokenLedger;
use super::lines::{Block, Role, Turn};
use crate::case::error::Problems;
use crate::case::{CaseError, Location, RecordedUsage, ScriptReply, ScriptStep};
use crate::session::CallStatus;
use crate::session::RecordedToolResult;

/// What a replay of the fixture serves.
pub(super) struct Replay {
    /// The first user turn's text.
    pub prompt: String,
    /// The texts of the later user turns, in order.
    pub follow_ups: Vec<String>,
    /// One script step per assistant turn.
    pub steps: Vec<ScriptStep>,
    /// Tool results in the order the calls were made.
    pub results: Vec<RecordedToolResult>,
}

/// A call waiting for its `toolResult`.
struct Open {
    id: String,
    name: String,
    line: usize,
}

/// Check the turns of a fixture; `end` is the assertions line, for errors about the end.
/// Every turn index out of sequence is reported; any other problem stops the check (what
/// follows it would not replay as recorded).
pub(super) fn replay(
    path: &Path,
    turns: &[(usize, Turn)],
    end: usize,
) -> Result<Replay, CaseError> {
    let mut problems = Problems::default();
    let replay = replay_turns(path, turns, end, &mut problems);
    let replay = problems.keep(replay);
    problems.finish(replay)
}

/// [`replay`], noting index problems in `problems` and returning the first other problem.
fn replay_turns(
    path: &Path,
    turns: &[(usize, Turn)],
    end: usize,
    problems: &mut Problems,
) -> Result<Replay, CaseError> {
    let mut prompt = None;
    let mut follow_ups = Vec::new();
    let mut steps = Vec::new();
    // Results by call, in call order; filled as toolResult turns arrive.
    let mut results: Vec<Option<RecordedToolResult>> = Vec::new();
    let mut open: Vec<(usize, Open)> = Vec::new();
    let mut last_final = false;
    for (expected, (line, turn)) in turns.iter().enumerate() {
        let line = *line;
        problems.keep(check_index(path, line, expected as u64, turn.turn_index));
        if turn.role != Role::ToolResult
            && let Some((_, call)) = open.first()
        {
            return Err(invalid(
                path,
                line,
                "turn.role",
                format!(
                    "tool call {} ({}) of line {} has no toolResult before this {} turn",
                    call.id,
                    call.name,
                    call.line,
                    role_name(turn.role)
                ),
            ));
        }
        if turn.role != Role::Assistant && turn.token_ledger.is_some() {
            return Err(invalid(
                path,
                line,
                "turn.tokenLedger",
                "only assistant turns carry a token ledger",
            ));
        }
        if turn.role != Role::ToolResult && (turn.tool_use_id.is_some() || turn.is_error) {
            return Err(invalid(
                path,
                line,
                "turn.toolUseId",
                "only toolResult turns carry toolUseId and isError",
            ));
        }
        let answered = last_final;
        last_final = false;
        match turn.role {
            Role::User => {
                let text = text_only(path, line, turn)?;
                if expected == 0 {
                    prompt = Some(text);
                } else if answered {
                    follow_ups.push(text);
                } else {
                    return Err(invalid(
                        path,
                        line,
                        "turn.role",
                        "a later user turn must follow an assistant answer without tool calls; the replay would ask for a response the recording does not have",
                    ));
                }
            }
            Role::Assistant => {
                if expected == 0 {
                    return Err(invalid(
                        path,
                        line,
                        "turn.role",
                        "turn 0 must be the user's",
                    ));
                }
                let Some(ledger) = turn.token_ledger else {
                    return Err(invalid(
                        path,
                        line,
                        "turn.tokenLedger",
                        "missing: assistant turns need {input, cache_read, cache_creation, output}",
                    ));
                };
                let mut items = Vec::new();
                for block in &turn.content {
                    match block {
                        Block::Text { text } => items.push(ScriptReply::Text(text.clone())),
                        Block::ToolCall {
                            id,
                            name,
                            arguments,
                        } => {
                            if open.iter().any(|(_, c)| &c.id == id) {
                                return Err(invalid(
                                    path,
                                    line,
                                    "turn.content",
                                    format!("tool call id {id} is used twice in this turn"),
                                ));
                            }
                            open.push((
                                results.len(),
                                Open {
                                    id: id.clone(),
                                    name: name.clone(),
                                    line,
                                },
                            ));
                            results.push(None);
                            items.push(ScriptReply::Call {
                                tool: name.clone(),
                                arguments: arguments.clone().into(),
                            });
                        }
                    }
                }
                if items.is_empty() {
                    return Err(invalid(
                        path,
                        line,
                        "turn.content",
                        "an assistant turn with no content",
                    ));
                }
                last_final = open.is_empty();
                let reply = match items.len() {
                    1 => items.remove(0),
                    _ => ScriptReply::Items(items),
                };
                steps.push(ScriptStep {
                    reply,
                    expect_input_contains: None,
                    location: Location::line(path, line),
                    usage: Some(usage(path, line, ledger)?),
                });
            }
            Role::ToolResult => {
                let Some(id) = &turn.tool_use_id else {
                    return Err(invalid(
                        path,
                        line,
                        "turn.toolUseId",
                        "missing: a toolResult turn names the call it answers",
                    ));
                };
                let Some(at) = open.iter().position(|(_, c)| &c.id == id) else {
                    return Err(invalid(
                        path,
                        line,
                        "turn.toolUseId",
                        format!("{id} answers no open tool call of the previous assistant turn"),
                    ));
                };
                let (slot, call) = open.remove(at);
                let status = if turn.is_error {
                    CallStatus::Failed
                } else {
                    CallStatus::Completed
                };
                results[slot] = Some(RecordedToolResult {
                    name: call.name,
                    status,
                    output: text_only(path, line, turn)?,
                });
            }
        }
    }
    if let Some((_, call)) = open.first() {
        return Err(invalid(
            path,
            end,
            "turn",
            format!(
                "tool call {} ({}) of line {} has no toolResult",
                call.id, call.name, call.line
            ),
        ));
    }
    let Some(prompt) = prompt else {
        return Err(invalid(
            path,
            end,
            "turn",
            "no turns; a fixture needs a user turn and the assistant's answer",
        ));
    };
    if !last_final {
        return Err(invalid(
            path,
            end,
            "turn",
            "the last turn must be an assistant answer without tool calls; the replay would ask for a response the recording does not have",
        ));
    }
    Ok(Replay {
        prompt,
        follow_ups,
        steps,
        results: results.into_iter().flatten().collect(),
    })
}

/// Largest count a ledger field may hold; keeps every sum over a run far from overflowing.
const MAX_LEDGER_TOKENS: u64 = crate::case::MAX_RECORDED_TOKENS;

/// The usage a recorded ledger reports. pi-ai's `input` (Anthropic's `input_tokens`) excludes
/// cached tokens, while a Responses `input_tokens` counts every token of the request, cached
/// ones included: input = `input + cache_read + cache_creation`; output = `output`.
fn usage(path: &Path, line: usize, ledger: TokenLedger) -> Result<RecordedUsage, CaseError> {
    let fields = [
        ("input", ledger.input),
        ("cache_read", ledger.cache_read),
        ("cache_creation", ledger.cache_creation),
        ("output", ledger.output),
    ];
    if let Some((name, value)) = fields.iter().find(|(_, v)| *v > MAX_LEDGER_TOKENS) {
        return Err(invalid(
            path,
            line,
            &format!("turn.tokenLedger.{name}"),
            format!("{value} is more than {MAX_LEDGER_TOKENS}, the most a ledger field may hold"),
        ));
    }
    Ok(RecordedUsage {
        input_tokens: ledger.input + ledger.cache_read + ledger.cache_creation,
        // (Cache reads are not reported apart: a fixture's replay reports its usage as it
        // always did.)
        cached_input_tokens: 0,
        output_tokens: ledger.output,
    })
}

fn check_index(path: &Path, line: usize, expected: u64, found: u64) -> Result<(), CaseError> {
    let problem = match found {
        f if f == expected => return Ok(()),
        f if expected > 0 && f == expected - 1 => "a duplicate of the previous turn's index",
        f if f < expected => "out of order",
        _ => "a gap",
    };
    Err(invalid(
        path,
        line,
        "turn.turnIndex",
        format!("{found} is {problem}; expected {expected} (strictly increasing from 0)"),
    ))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::ToolResult => "toolResult",
    }
}

/// The text of a turn that may hold only text blocks.
fn text_only(path: &Path, line: usize, turn: &Turn) -> Result<String, CaseError> {
    let mut text = String::new();
    for block in &turn.content {
        match block {
            Block::Text { text: t } => text.push_str(t),
            Block::ToolCall { .. } => {
                return Err(invalid(
                    path,
                    line,
                    "turn.content",
                    format!(
                        "a toolCall block in a {} turn; only assistant turns call tools",
                        role_name(turn.role)
                    ),
                ));
            }
        }
    }
    Ok(text)
}
