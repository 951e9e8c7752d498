"""Writes the AgentCompany example fixtures and their scenario files (run from the repo root)."""
import hashlib, json, os

def ledger(i, o):
    return {"input": i, "cache_read": i // 2, "cache_creation": 120, "output": o}

def write(dir, fid, scenario, system, user, turns, assertions, rubric):
    sc = os.path.join(dir, "scenarios", fid)
    os.makedirs(sc, exist_ok=True)
    open(os.path.join(sc, "system.txt"), "w").write(system)
    open(os.path.join(sc, "user.txt"), "w").write(user)
    lines = [{"type": "meta", "fixtureId": fid, "piAgentCoreVersion": "0.67.68",
              "recordedAt": "2026-04-20T21:14:00.000Z", "scenario": scenario,
              "systemPromptHash": "sha256:" + hashlib.sha256(system.encode()).hexdigest()},
             {"type": "turn", "turnIndex": 0, "role": "user", "content": [{"type": "text", "text": user}]}]
    for i, t in enumerate(turns, start=1):
        lines.append(dict({"type": "turn", "turnIndex": i}, **t))
    lines.append({"type": "assertions", "assertions": assertions, "semanticRubric": rubric})
    with open(os.path.join(dir, fid + ".jsonl"), "w") as f:
        for l in lines:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")

def text(t): return {"type": "text", "text": t}
def user(t): return {"role": "user", "content": [text(t)]}
def call(id, name, args): return {"type": "toolCall", "id": id, "name": name, "arguments": args}
def asst(blocks, i=900, o=60): return {"role": "assistant", "content": blocks, "tokenLedger": ledger(i, o)}
def result(id, t, err=False):
    r = {"role": "toolResult", "toolUseId": id, "content": [text(t)]}
    if err: r["isError"] = True
    return r

CEO_SYSTEM = ("You are the CEO of AgentCompany. Your team is empty. Call the `hire_agent` tool to file "
              "the first three hires for the engineering, design, and research departments. After all "
              "three, call `approve_ceo_strategy` once.\n")
CEO_TURNS = [
    asst([text("Starting team build with engineering."), call("call_1", "hire_agent", {"department": "engineering", "role": "Head of Engineering"})]),
    result("call_1", "hired agent-42 (engineering)"),
    asst([call("call_2", "hire_agent", {"department": "design", "role": "Design Lead"}),
          call("call_3", "hire_agent", {"department": "research", "role": "Research Lead"})], 1100, 80),
    result("call_2", "hired agent-43 (design)"),
    result("call_3", "hired agent-44 (research)"),
    asst([call("call_4", "approve_ceo_strategy", {"summary": "Three founding leads: engineering, design, research."})], 1300, 40),
    result("call_4", "strategy approved"),
    asst([text("Your founding team: agent-42 leads engineering, agent-43 design, agent-44 research. Strategy approved.")], 1400, 50),
]
CEO_RUBRIC = [{"id": "ceo-team-bootstrap", "question": "Does the CEO bootstrap a balanced leadership team?",
               "passRubric": "The answer creates leadership hires across core functions and files strategy approval.",
               "failRubric": "The answer writes a plan or omits core leadership coverage.",
               "mustContain": ["engineering", "design", "research", "approve_ceo_strategy"],
               "mustNotContain": ["fire_agent"]}]
write("cases/agentcompany", "ceo-bootstrap-empty", "Empty company, CEO bootstrap", CEO_SYSTEM, "Build me a team.",
      CEO_TURNS,
      [{"kind": "tool_called", "name": "hire_agent", "min_count": 3, "max_count": 5},
       {"kind": "tool_called", "name": "approve_ceo_strategy", "max_count": 1, "order": 3},
       {"kind": "no_tool_called", "name": "fire_agent"},
       {"kind": "message_contains_substring", "role": "assistant", "substring": "engineering"},
       {"kind": "tool_call_arg_matches", "name": "hire_agent", "arg_path": "department", "matches_regex": "^(engineering|design|research)$"},
       {"kind": "trace_max_turns", "max": 40}],
      CEO_RUBRIC)

BUILD_SYSTEM = ("You are an engineer at AgentCompany. Fix build errors with the `shell` tool: run the build, "
                "read the compiler error, make the smallest fix, and run the build again before you answer.\n")
write("cases/agentcompany", "type-error-fix", "IC fixes a type error with the shell tool",
      BUILD_SYSTEM, "The build is red on main. Please fix it.",
      [asst([call("call_1", "shell", {"command": "cargo build"})]),
       result("call_1", "error[E0308]: mismatched types\n --> src/lib.rs:3:5\n  |\n3 |     \"42\"\n  |     ^^^^ expected `u32`, found `&str`", True),
       asst([text("The function returns a string literal where a u32 is expected."),
             call("call_2", "shell", {"command": "sed -i 's/\"42\"/42/' src/lib.rs && cargo build"})], 1500, 70),
       result("call_2", "Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.41s"),
       asst([text("Fixed: src/lib.rs returned \"42\" (a &str) where u32 was expected; it now returns 42 and cargo build passes.")], 1700, 45)],
      [{"kind": "tool_called", "name": "shell", "min_count": 2, "max_count": 2, "order": 0},
       {"kind": "tool_call_arg_matches", "name": "shell", "arg_path": "command", "matches_regex": "cargo build$"},
       {"kind": "message_contains_substring", "role": "toolResult", "substring": "E0308"},
       {"kind": "message_contains_substring", "role": "assistant", "substring": "cargo build passes"},
       {"kind": "no_tool_called", "name": "write_file"},
       {"kind": "trace_max_turns", "max": 6}],
      [{"id": "fix-verified", "question": "Does the engineer verify the fix by rebuilding?",
        "passRubric": "The answer changes the offending line and reruns the build before reporting.",
        "failRubric": "The answer reports a fix without rebuilding, or rewrites unrelated code.",
        "mustContain": ["cargo build", "src/lib.rs", "passes"], "mustNotContain": ["git reset", "rm -rf"]}])

# Two user turns: a plan, then a follow-up that changes it. The second turn is replayed as
# another agent turn of the same run, with the first turn's messages in its requests.
PLAN_SYSTEM = ("You are the CEO of AgentCompany. Plan hiring from the real headcount: call `list_agents` "
               "before planning, and file a hire with `hire_agent` only when the user asks for it.\n")
PLAN_TURNS = [
    asst([text("Checking the current engineering headcount first."),
          call("call_1", "list_agents", {"department": "engineering"})], 2100, 40),
    result("call_1", "agent-42 Head of Engineering (engineering)\nbudget remaining: $180k"),
    asst([text("30-day hiring plan for engineering (budget $180k, lead: agent-42):\n"
               "week 1: backend engineer\nweek 2: frontend engineer\nweek 4: QA engineer")], 2400, 90),
    user("Good. Move the frontend hire to week 1 and file it now."),
    asst([call("call_2", "hire_agent", {"department": "engineering", "role": "Frontend Engineer"})], 2700, 35),
    result("call_2", "hired agent-51 (engineering)"),
    asst([text("Revised 30-day plan: week 1 frontend engineer (filed: agent-51), "
               "week 2 backend engineer, week 4 QA engineer.")], 2900, 55),
]
write("cases/agentcompany", "ceo-plan-follow-up", "CEO plans hiring, then revises the plan on a follow-up",
      PLAN_SYSTEM, "Draft a 30-day hiring plan for engineering.",
      PLAN_TURNS,
      [{"kind": "tool_called", "name": "list_agents", "min_count": 1, "max_count": 1, "order": 0},
       {"kind": "tool_called", "name": "hire_agent", "min_count": 1, "max_count": 1, "order": 1},
       {"kind": "tool_call_arg_matches", "name": "hire_agent", "arg_path": "role", "matches_regex": "^Frontend"},
       {"kind": "message_contains_substring", "role": "user", "substring": "file it now"},
       {"kind": "message_contains_substring", "role": "assistant", "substring": "Revised 30-day plan"},
       {"kind": "trace_max_turns", "max": 8}],
      [{"id": "plan-follows-up", "question": "Does the CEO revise the plan as asked and file only the requested hire?",
        "passRubric": "The plan starts from the headcount, and the follow-up moves the frontend hire and files it.",
        "failRubric": "The plan ignores the headcount, or the follow-up files hires nobody asked for.",
        "mustContain": ["list_agents", "30-day", "agent-51", "week 1 frontend"],
        "mustNotContain": ["fire_agent"]}])

write("cases/agentcompany-failing", "ceo-overhires", "CEO hires past the cap and skips research",
      CEO_SYSTEM, "Build me a team.",
      CEO_TURNS[:5] + [asst([text("Team hired: engineering and design leads.")], 1300, 30)],
      [{"kind": "tool_called", "name": "hire_agent", "max_count": 2},
       {"kind": "trace_max_turns", "max": 40}],
      [{"id": "ceo-team-bootstrap", "question": "Does the CEO bootstrap a balanced leadership team?",
        "passRubric": "The answer creates leadership hires across core functions and files strategy approval.",
        "failRubric": "The answer writes a plan or omits core leadership coverage.",
        "mustContain": ["approve_ceo_strategy", "budget"], "mustNotContain": ["research"]}])
