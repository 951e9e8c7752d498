//! One tool call from request to result, in the policy's order: unknown tool, invalid
//! arguments, protected paths (refused in every mode, before confirmation), confirmation,
//! then `tool_start`, execution and `tool_result`.

use std::time::Instant;

use super::AgentError;
use super::policy::{DECLINED, approves, protected_path};
use super::tools::{Tool, ToolCall, ToolContext, ToolOutput};
use crate::session::Approve;
use crate::session::CallStatus;
use crate::session::{SessionLog, ToolCallRecords};

/// What every call of a turn runs with.
pub(crate) struct CallContext {
    pub tools: ToolContext,
    pub approve: Approve,
    /// Recorded results that answer calls instead of the tools (replay).
    /// Shared by the turns of a conversation, so each turn continues where the last stopped.
    pub replay: Option<std::sync::Arc<super::replay::ReplayTools>>,
    /// Whether the session offers `skill_view` (it found `.agents/skills` at its start).
    pub skills: bool,
}

/// Decide, run and record one call; returns the result the model sees.
pub(crate) async fn handle_call(
    ctx: &CallContext,
    call_id: &str,
    name: &str,
    arguments: &str,
    log: &mut SessionLog,
) -> Result<ToolOutput, AgentError> {
    let records = ToolCallRecords::new(call_id, name);
    if let Some(replay) = &ctx.replay {
        return replay.answer(records, log);
    }
    let started = Instant::now();
    let result = match admit(ctx, name, arguments) {
        Err(refusal) => refusal,
        Ok(call) => {
            log.append(records.started())?;
            call.execute(&ctx.tools).await
        }
    };
    log.append(records.ended(
        result.status,
        &result.output,
        started.elapsed().as_millis() as u64,
    ))?;
    Ok(result)
}

/// The call, if it may run; otherwise the result that refuses it.
fn admit(ctx: &CallContext, name: &str, arguments: &str) -> Result<ToolCall, ToolOutput> {
    let Some(tool) = Tool::from_name(name, ctx.skills) else {
        let available: Vec<&str> = Tool::offered(ctx.skills).map(Tool::name).collect();
        return Err(ToolOutput::new(
            CallStatus::UnknownTool,
            format!(
                "Tool `{name}` does not exist. Available tools: {}.",
                available.join(", ")
            ),
        ));
    };
    let call = ToolCall::parse(tool, arguments)
        .map_err(|message| ToolOutput::new(CallStatus::InvalidArguments, message))?;
    if let Some(path) = call.path()
        && let Some(reason) = protected_path(&ctx.tools.dir, &path)
    {
        return Err(ToolOutput::new(CallStatus::Denied, reason));
    }
    if call.tool().needs_confirmation() && !approves(ctx.approve) {
        return Err(ToolOutput::new(CallStatus::Denied, DECLINED));
    }
    Ok(call)
}
