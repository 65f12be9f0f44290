//! The simulated model as an agent's model. When a request offers the `read` and `exec` tools
//! and its system prompt lists `<available_skills>` (as an agent gateway's does), it does what
//! a person trying the default run expects, in the steps a real model takes:
//!
//! 1. picks the skill whose name and description share the most words with what the person
//!    said, and reads its `SKILL.md` (`read` at the skill's location);
//! 2. picks the route in that file the same way and runs its `curl` line (`exec`), filling a
//!    required address (`0x…` or base58) or search word from the message;
//! 3. answers quoting what svc answered.
//!
//! With no skill matching the message it says so and names the skills it has. It cannot find
//! inputs the message does not hold, chain several calls, or judge a trade.

use serde_json::{Value, json};

use super::llm::content_text;

/// What the model does next.
pub(super) enum Turn {
    /// Calls a tool with these arguments.
    Call { name: String, arguments: Value },
    /// Answers with this text.
    Say(String),
}

/// The most of a tool's answer quoted back.
const QUOTED_CHARS: usize = 1500;
/// The most of each field of a JSON answer quoted back.
const QUOTED_FIELD_CHARS: usize = 300;
/// Tool calls after one message of the person's, before the model answers whatever it has.
const MAX_STEPS: usize = 3;
/// Words too common to tell one skill or route from another.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "you", "your", "what", "are", "show", "give", "get", "tell", "about", "please", "can", "some",
    "now", "today", "with", "from", "this", "that", "how", "any", "all", "its", "svc", "hello", "agent", "fetch",
    "list", "latest", "current", "which", "who", "right", "me", "want", "need", "would", "like", "there", "their",
    "them", "they", "into", "out", "see", "find", "look", "know",
];

/// The agent's next turn, when the request is an agent's with skills.
pub(super) fn turn(request: &Value, messages: &[Value]) -> Option<Turn> {
    let offered = |name: &str| {
        request.get("tools").and_then(Value::as_array).is_some_and(|tools| {
            tools.iter().any(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(name))
        })
    };
    if !offered("read") || !offered("exec") {
        return None;
    }
    let role = |m: &Value| m.get("role").and_then(Value::as_str).unwrap_or("").to_owned();
    let system: String =
        messages.iter().filter(|m| matches!(role(m).as_str(), "system" | "developer")).map(content_text).collect();
    let skills = skills_in(&system);
    if skills.is_empty() {
        return None;
    }
    // The person's message: the last user message that is not the gateway's own context.
    let (at, said) = messages.iter().enumerate().rev().find_map(|(i, m)| {
        let text = content_text(m);
        (role(m) == "user" && !text.trim_start().starts_with("<<<")).then(|| (i, persons_words(&text)))
    })?;
    let asked = words(&said);
    let calls: Vec<(String, Value)> = messages[at..]
        .iter()
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .filter_map(|call| {
            let name = call.pointer("/function/name")?.as_str()?.to_owned();
            let arguments = call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("{}");
            Some((name, serde_json::from_str(arguments).unwrap_or(Value::Null)))
        })
        .collect();
    let result = messages[at..].iter().rev().find(|m| role(m) == "tool").map(content_text);
    let Some((last, _)) = calls.last() else {
        return Some(choose_skill(&skills, &asked, &said));
    };
    let result = result.unwrap_or_default();
    if last == "read" && calls.len() < MAX_STEPS {
        return Some(match choose_route(&result, &asked, &said) {
            Turn::Call { name, arguments } => Turn::Call { name, arguments: unredacted(arguments, &system) },
            say => say,
        });
    }
    Some(Turn::Say(format!("The tool answered: {}", quoted(&result))))
}

/// The gateway redacts credential headers in what its tools read (`X-API-Key: ***`), even a
/// shell reference to one; the model puts back the reference its rules give
/// (`send X-API-Key: $SVC_API_TOKEN`), as a model reading both would.
fn unredacted(mut arguments: Value, system: &str) -> Value {
    const HEADER: &str = "X-API-Key: ";
    let reference = system.match_indices(HEADER).find_map(|(at, _)| {
        let rest = &system[at + HEADER.len()..];
        let name: String =
            rest.strip_prefix('$')?.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        (!name.is_empty()).then(|| format!("${name}"))
    });
    if let (Some(reference), Some(command)) = (reference, arguments["command"].as_str()) {
        arguments["command"] = Value::String(command.replace(&format!("{HEADER}***"), &format!("{HEADER}{reference}")));
    }
    arguments
}

/// A skill listed in the system prompt.
struct Skill {
    name: String,
    description: String,
    location: String,
}

fn skills_in(system: &str) -> Vec<Skill> {
    let Some(start) = system.find("<available_skills>") else { return Vec::new() };
    let list = &system[start..system[start..].find("</available_skills>").map_or(system.len(), |end| start + end)];
    list.split("<skill>")
        .skip(1)
        .filter_map(|block| {
            let field = |tag: &str| {
                let open = format!("<{tag}>");
                let from = block.find(&open)? + open.len();
                let to = block[from..].find(&format!("</{tag}>"))? + from;
                Some(unescape(block[from..to].trim()))
            };
            Some(Skill {
                name: field("name")?,
                description: field("description").unwrap_or_default(),
                location: field("location")?,
            })
        })
        .collect()
}

fn unescape(text: &str) -> String {
    text.replace("&apos;", "'").replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// What the person wrote, without the envelope a gateway puts around it: fenced blocks, lines
/// of `key=value` metadata, a leading `[timestamp]`.
fn persons_words(text: &str) -> String {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.contains('=') || line.contains('⟦') {
            continue;
        }
        let line = match line.trim_start().strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or(line, |(_, after)| after),
            None => line,
        };
        out.push(line.trim());
    }
    out.join(" ").trim().to_owned()
}

/// The words that tell skills and routes apart: lower case, stemmed, no stopwords.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 3 && !STOPWORDS.contains(&w.as_str()))
        .map(|w| if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") { w[..w.len() - 1].to_owned() } else { w })
        .collect()
}

fn same_word(a: &str, b: &str) -> bool {
    a == b || (a.len() >= 5 && b.len() >= 5 && (a.starts_with(b) || b.starts_with(a)))
}

/// How many of the asked words `text` holds.
fn score(asked: &[String], text: &str) -> usize {
    let candidate = words(text);
    asked.iter().filter(|a| candidate.iter().any(|c| same_word(a, c))).count()
}

fn choose_skill(skills: &[Skill], asked: &[String], said: &str) -> Turn {
    let best = skills
        .iter()
        .map(|s| (score(asked, &format!("{} {}", s.name, s.description)), s))
        .filter(|(points, _)| *points > 0)
        .max_by_key(|(points, s)| (*points, std::cmp::Reverse(s.name.len())));
    match best {
        Some((_, skill)) => Turn::Call { name: "read".into(), arguments: json!({"path": skill.location}) },
        None => {
            let offer: Vec<String> = skills.iter().map(|s| format!("- {}: {}", s.name, s.description)).collect();
            Turn::Say(format!(
                "I am svc's simulated model: I pick one of my skills by the words of your message, call it and \
                 quote what svc answers. Nothing in \"{said}\" matches one. Ask about one of these, for example \
                 \"show me the top picks\" or \"any whale alerts?\":\n{}",
                offer.join("\n")
            ))
        }
    }
}

/// A route as a `SKILL.md` teaches it.
struct Route {
    method: String,
    path: String,
    description: String,
    required: Vec<String>,
    call: String,
}

fn routes_in(skill: &str) -> Vec<Route> {
    let mut routes: Vec<Route> = Vec::new();
    for line in skill.lines() {
        let line = line.trim();
        if let Some(heading) = line.strip_prefix("### ") {
            let mut parts = heading.split_whitespace();
            if let (Some(method), Some(path)) = (parts.next(), parts.next()) {
                routes.push(Route {
                    method: method.to_owned(),
                    path: path.to_owned(),
                    description: String::new(),
                    required: Vec::new(),
                    call: String::new(),
                });
            }
            continue;
        }
        let Some(route) = routes.last_mut() else { continue };
        if let Some(inputs) = line.strip_prefix("- inputs (* required):") {
            route.required = inputs
                .split(',')
                .filter(|i| i.trim().ends_with('*'))
                .map(|i| i.trim().trim_end_matches('*').trim_matches('`').to_owned())
                .collect();
        } else if let Some(call) = line.strip_prefix("- call: `") {
            route.call = call.trim_end_matches('`').to_owned();
        } else if !line.starts_with("- ") && !line.is_empty() && route.description.is_empty() {
            route.description = line.to_owned();
        }
    }
    routes.retain(|r| !r.call.is_empty());
    routes
}

fn choose_route(skill: &str, asked: &[String], said: &str) -> Turn {
    let routes = routes_in(skill);
    let scored: Vec<(usize, &Route)> =
        routes.iter().map(|r| (score(asked, &format!("{} {}", r.path, r.description)), r)).collect();
    let best = scored
        .iter()
        .filter(|(_, r)| fill(r, said).is_some())
        .max_by_key(|(points, r)| (*points, r.required.is_empty(), r.method == "GET", std::cmp::Reverse(r.path.len())));
    if let Some((_, route)) = best
        && let Some(command) = fill(route, said)
    {
        return Turn::Call { name: "exec".into(), arguments: json!({"command": command}) };
    }
    match scored.iter().max_by_key(|(points, _)| *points) {
        Some((_, route)) => Turn::Say(format!(
            "{} {} needs {} from you; say it in your message (an address as 0x… or base58).",
            route.method,
            route.path,
            route.required.join(", ")
        )),
        None => Turn::Say("That skill has no route I can call.".to_owned()),
    }
}

/// The route's `curl` line with its required inputs filled from the message, if they can be.
fn fill(route: &Route, said: &str) -> Option<String> {
    let mut values = serde_json::Map::new();
    for name in &route.required {
        let lower = name.to_lowercase();
        let value = if ["address", "mint", "wallet", "token"].iter().any(|k| lower.contains(k)) {
            address_in(said)?
        } else if ["keyword", "query", "search", "q"].contains(&lower.as_str()) {
            let asked = words(said);
            let known = words(&format!("{} {}", route.path, route.description));
            let free: Vec<&String> = asked.iter().filter(|a| !known.iter().any(|k| same_word(a, k))).collect();
            free.last().map(|w| (*w).clone())?
        } else {
            return None;
        };
        values.insert(name.clone(), Value::String(value));
    }
    let mut command = route.call.clone();
    let mut rest = serde_json::Map::new();
    for (name, value) in values {
        let slot = format!("{{{name}}}");
        match value.as_str() {
            Some(text) if command.contains(&slot) => command = command.replace(&slot, text),
            _ => {
                rest.insert(name, value);
            }
        }
    }
    // The URL is the command's first double-quoted word.
    let url_start = command.find("\"http")? + 1;
    let url_end = command[url_start..].find('"')? + url_start;
    if command[url_start..url_end].contains('{') {
        return None;
    }
    if !rest.is_empty() {
        if route.method == "GET" || route.method == "DELETE" {
            let query: Vec<String> =
                rest.iter().map(|(name, value)| format!("{name}={}", value.as_str().unwrap_or_default())).collect();
            command.insert_str(url_end, &format!("?{}", query.join("&")));
        } else {
            command = command.replace("'{...}'", &format!("'{}'", Value::Object(rest)));
        }
    }
    Some(command)
}

/// An address in the message: `0x` and 40 hex digits, or 32–44 base58 characters.
fn address_in(said: &str) -> Option<String> {
    said.split(|c: char| !c.is_alphanumeric()).find_map(|word| {
        let evm = word.len() == 42 && word.starts_with("0x") && word[2..].chars().all(|c| c.is_ascii_hexdigit());
        let base58 =
            (32..=44).contains(&word.len()) && word.chars().all(|c| c.is_ascii_alphanumeric() && !"0OIl".contains(c));
        (evm || base58).then(|| word.to_owned())
    })
}

/// A tool's answer as the model quotes it: a JSON object field by field, each cut short, so
/// every field shows however long the first is; other text cut short.
fn quoted(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(fields)) if !fields.is_empty() => fields
            .iter()
            .map(|(name, value)| format!("{name}: {}", cut(&value.to_string(), QUOTED_FIELD_CHARS)))
            .collect::<Vec<_>>()
            .join("; "),
        _ => cut(text, QUOTED_CHARS),
    }
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str = "---\nname: svc-alpha\n---\n\n## Routes\n\n### GET /api/svc-tools/top-picks\n\nTop 3 \
        smart-money tokens per chain.\n\n- price: 0.02 USD in credits\n- inputs (* required): none\n- call: `curl -s \
        -X GET \"http://127.0.0.1:18800/api/svc-tools/top-picks\" -H \"X-API-Key: $SVC_API_TOKEN\"`\n\n### GET \
        /api/svc-tools/whale-alerts\n\nLarge buys and sells by tracked wallets.\n\n- inputs (* required): none\n- \
        call: `curl -s -X GET \"http://127.0.0.1:18800/api/svc-tools/whale-alerts\" -H \"X-API-Key: \
        $SVC_API_TOKEN\"`\n\n### POST /api/svc-tools/evm/token-price\n\nUSD price of an EVM token.\n\n- inputs (* \
        required): `network`, `token_address`*\n- call: `curl -s -X POST \
        \"http://127.0.0.1:18800/api/svc-tools/evm/token-price\" -H \"X-API-Key: $SVC_API_TOKEN\" -H \
        'Content-Type: application/json' -d '{...}'`\n";

    fn request(messages: Vec<Value>) -> (Value, Vec<Value>) {
        let system = "## Skills\n<available_skills>\n  <skill>\n    <name>svc-alpha</name>\n    <description>Signals: \
            Top Picks, whale alerts.</description>\n    <location>~/skills/svc-alpha/SKILL.md</location>\n  </skill>\n  \
            <skill>\n    <name>svc-data</name>\n    <description>Market data: token prices.</description>\n    \
            <location>~/skills/svc-data/SKILL.md</location>\n  </skill>\n</available_skills>";
        let mut all = vec![json!({"role": "system", "content": system})];
        all.extend(messages);
        let tools = json!([{"function": {"name": "read"}}, {"function": {"name": "exec"}}]);
        (json!({"tools": tools}), all)
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": format!("[Sat 2026-11-28 14:21 UTC] Conversation info: ⟦openclaw:ctx⟧\n```json\n{{}}\n```\n\n{text}\n\nRuntime: agent=main | model=x")})
    }

    fn called(name: &str, arguments: &Value) -> Vec<Value> {
        vec![
            json!({"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": name, "arguments": arguments.to_string()}}]}),
        ]
    }

    #[test]
    fn the_agent_reads_the_skill_runs_the_route_and_quotes_svc() {
        let (req, mut messages) = request(vec![user("What are the top picks right now?")]);
        let Some(Turn::Call { name, arguments }) = turn(&req, &messages) else { panic!("a call") };
        assert_eq!((name.as_str(), &arguments), ("read", &json!({"path": "~/skills/svc-alpha/SKILL.md"})));
        messages.extend(called("read", &arguments));
        messages.push(json!({"role": "tool", "tool_call_id": "c1", "content": SKILL}));
        let Some(Turn::Call { name, arguments }) = turn(&req, &messages) else { panic!("a call") };
        assert_eq!(name, "exec");
        assert!(arguments["command"].as_str().is_some_and(|c| c.contains("/api/svc-tools/top-picks\"")), "{arguments}");
        messages.extend(called("exec", &arguments));
        messages.push(json!({"role": "tool", "tool_call_id": "c2", "content": "{\"picks\":[1,2,3]}"}));
        let Some(Turn::Say(text)) = turn(&req, &messages) else { panic!("an answer") };
        assert_eq!(text, "The tool answered: picks: [1,2,3]");
    }

    #[test]
    fn a_redacted_key_header_is_put_back_from_the_rules() {
        let system =
            "## Tools\nThe service's API is at `$SVC_API_URL`; send `X-API-Key: $SVC_API_TOKEN` with every call.";
        let arguments = json!({"command": "curl -s \"http://x/a\" -H \"X-API-Key: ***\""});
        let command = unredacted(arguments, system)["command"].as_str().expect("command").to_owned();
        assert_eq!(command, "curl -s \"http://x/a\" -H \"X-API-Key: $SVC_API_TOKEN\"");
    }

    #[test]
    fn words_pick_the_route_and_a_required_address_comes_from_the_message() {
        let whales = choose_route(SKILL, &words("any whale alerts?"), "any whale alerts?");
        assert!(
            matches!(whales, Turn::Call { arguments, .. } if arguments["command"].as_str().is_some_and(|c| c.contains("whale-alerts")))
        );
        let said = "price of 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913 please";
        let Turn::Call { arguments, .. } = choose_route(SKILL, &words(said), said) else { panic!("a call") };
        let command = arguments["command"].as_str().expect("command");
        assert!(
            command.contains(r#"-d '{"token_address":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}'"#),
            "{command}"
        );
    }

    #[test]
    fn a_message_matching_no_skill_is_answered_with_what_the_model_can_do() {
        let (req, messages) = request(vec![user("hello, agent")]);
        let Some(Turn::Say(text)) = turn(&req, &messages) else { panic!("an answer") };
        assert!(text.contains("Nothing in \"hello, agent\" matches") && text.contains("svc-alpha"), "{text}");
        let (plain, messages) = (json!({"tools": [{"function": {"name": "exec"}}]}), request(vec![user("hi")]).1);
        assert!(turn(&plain, &messages).is_none(), "not an agent with skills: the usual answers");
    }
}
