//! `todo`: the model's plan for multi-step work. The model writes the whole list each
//! time; the engine keeps it in the ledger, the TUI draws it above the input, headless prints it
//! as a `todo` event, and every successor's briefing carries it verbatim.

use serde_json::{Value, json};

use super::ToolError;
use super::args::Args;
use crate::engine::step_memory::{
    TODO_ITEM_MAX_CHARS, TODO_MAX_ITEMS, TodoItem, TodoStatus, todo_counts, todo_line,
};
use crate::engine::types::ToolSpec;

/// The tool's name.
pub const NAME: &str = super::names::TODO;

/// The tool's schema and description.
pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.into(),
        description: format!(
            "Keep a plan for work of several steps. Send the whole list every time: it replaces \
             the previous one. Each item has a `status`: `pending`, `in_progress` or `done`. Mark \
             an item in_progress when you start it and done as soon as it is finished, one item \
             in progress at a time. The user sees the list while items are open, and after a \
             handoff your successor receives it verbatim. At most {TODO_MAX_ITEMS} items of \
             {TODO_ITEM_MAX_CHARS} characters; an empty list clears the plan. Skip it for a \
             request of one or two steps."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "maxItems": TODO_MAX_ITEMS,
                    "description": "The whole plan, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "text": {"type": "string", "description": "What to do, in a few words."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
                        },
                        "required": ["text", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["items"],
            "additionalProperties": false
        }),
    }
}

/// The example every error message ends with.
const EXAMPLE: &str = r#"Send the whole list, e.g. {"items": [{"text": "read the parser", "status": "done"}, {"text": "fix the lexer", "status": "in_progress"}, {"text": "run the tests", "status": "pending"}]}."#;

fn bad(what: String) -> ToolError {
    ToolError(format!("`todo`: {what} {EXAMPLE}"))
}

/// The plan a call writes, from its raw arguments; an error result for the model when they are
/// not a plan.
pub(crate) fn parse_call(input: &Value) -> Result<Vec<TodoItem>, ToolError> {
    let map = super::arguments(NAME, input)?;
    parse(&Args::new(NAME, map))
}

/// The plan a call writes, checked: every item a non-empty text (trimmed) and a known status.
pub(crate) fn parse(args: &Args) -> Result<Vec<TodoItem>, ToolError> {
    let items = match args.raw("items") {
        None | Some(Value::Null) => return Err(bad("the argument `items` is missing.".into())),
        Some(Value::Array(items)) => items,
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            // A model that sent the list as a JSON string.
            Ok(Value::Array(items)) => return parse_items(&items),
            _ => return Err(bad("`items` must be a list of objects.".into())),
        },
        Some(_) => return Err(bad("`items` must be a list of objects.".into())),
    };
    parse_items(items)
}

fn parse_items(items: &[Value]) -> Result<Vec<TodoItem>, ToolError> {
    if items.len() > TODO_MAX_ITEMS {
        return Err(bad(format!(
            "the plan holds at most {TODO_MAX_ITEMS} items and this one has {}; merge small steps.",
            items.len()
        )));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let Value::Object(map) = item else {
            return Err(bad(format!(
                "item {n} is not an object with `text` and `status`."
            )));
        };
        let text = ["text", "content", "step"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str))
            .map(str::trim)
            .unwrap_or_default();
        if text.is_empty() {
            return Err(bad(format!("item {n} has no `text`.")));
        }
        let chars = text.chars().count();
        if chars > TODO_ITEM_MAX_CHARS {
            return Err(bad(format!(
                "item {n} has {chars} characters; an item holds at most {TODO_ITEM_MAX_CHARS}."
            )));
        }
        let status = match map.get("status") {
            Some(Value::String(s)) => TodoStatus::parse(s).ok_or_else(|| {
                bad(format!(
                    "item {n} has the status `{s}`; it must be pending, in_progress or done."
                ))
            })?,
            None | Some(Value::Null) => return Err(bad(format!("item {n} has no `status`."))),
            Some(other) => {
                return Err(bad(format!(
                    "item {n} has the status {other}; it must be pending, in_progress or done."
                )));
            }
        };
        out.push(TodoItem {
            text: text.to_string(),
            status,
        });
    }
    Ok(out)
}

/// What the model reads back: the counts, then the list as its successor will read it.
pub fn answer(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "Plan cleared.".into();
    }
    let mut out = format!(
        "Plan updated: {} item{} ({}).",
        items.len(),
        if items.len() == 1 { "" } else { "s" },
        todo_counts(items)
    );
    for item in items {
        out.push('\n');
        out.push_str(&todo_line(item));
    }
    out
}

/// One line for UIs: `todo: 5 items, 2 done`.
pub fn summary(input: &Value) -> String {
    match input.get("items").and_then(Value::as_array) {
        Some(items) => {
            let done = items
                .iter()
                .filter(|i| {
                    i.get("status")
                        .and_then(Value::as_str)
                        .and_then(TodoStatus::parse)
                        == Some(TodoStatus::Done)
                })
                .count();
            match items.len() {
                0 => "todo: clear the plan".into(),
                1 => format!("todo: 1 item, {done} done"),
                n => format!("todo: {n} items, {done} done"),
            }
        }
        None => NAME.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(input: Value) -> Result<Vec<TodoItem>, ToolError> {
        parse_call(&input)
    }

    #[test]
    fn the_whole_list_with_lenient_statuses() {
        let items = plan(json!({"items": [
            {"text": " read the parser ", "status": "done"},
            {"content": "fix the lexer", "status": "in progress"},
            {"text": "run the tests", "status": "pending"}
        ]}))
        .unwrap();
        assert_eq!(
            items,
            [
                TodoItem {
                    text: "read the parser".into(),
                    status: TodoStatus::Done
                },
                TodoItem {
                    text: "fix the lexer".into(),
                    status: TodoStatus::InProgress
                },
                TodoItem {
                    text: "run the tests".into(),
                    status: TodoStatus::Pending
                },
            ]
        );
        assert_eq!(
            answer(&items),
            "Plan updated: 3 items (1 done, 1 in progress, 1 pending).\n- [done] read the parser\n- [in progress] fix the lexer\n- [pending] run the tests"
        );
        // The list sent as a JSON string, as some models do.
        let s = plan(json!({"items": "[{\"text\": \"a\", \"status\": \"done\"}]"})).unwrap();
        assert_eq!(s.len(), 1);
        // An empty list clears the plan.
        assert_eq!(plan(json!({"items": []})).unwrap(), []);
        assert_eq!(answer(&[]), "Plan cleared.");
    }

    #[test]
    fn bad_plans_say_what_is_wrong_and_show_the_shape() {
        let cases = [
            (json!({}), "the argument `items` is missing"),
            (json!({"items": 3}), "`items` must be a list"),
            (json!({"items": ["x"]}), "item 1 is not an object"),
            (
                json!({"items": [{"status": "done"}]}),
                "item 1 has no `text`",
            ),
            (
                json!({"items": [{"text": "a", "status": "done"}, {"text": "b", "status": "later"}]}),
                "item 2 has the status `later`",
            ),
            (json!({"items": [{"text": "a"}]}), "item 1 has no `status`"),
            (
                json!({"items": [{"text": "a", "status": 1}]}),
                "item 1 has the status 1",
            ),
            (
                json!({"items": [{"text": "x".repeat(501), "status": "done"}]}),
                "item 1 has 501 characters",
            ),
            (json!("nope"), "must be a JSON object"),
        ];
        for (input, want) in cases {
            let e = plan(input.clone()).unwrap_err();
            assert!(e.0.contains(want), "{input}: {e}");
        }
        let many: Vec<Value> = (0..51)
            .map(|i| json!({"text": format!("s{i}"), "status": "pending"}))
            .collect();
        let e = plan(json!({ "items": many })).unwrap_err();
        assert!(e.0.contains("at most 50 items and this one has 51"), "{e}");
        assert!(
            e.0.contains(r#"{"items": [{"text": "read the parser""#),
            "{e}"
        );
    }

    #[test]
    fn summaries() {
        assert_eq!(
            summary(
                &json!({"items": [{"text": "a", "status": "done"}, {"text": "b", "status": "pending"}]})
            ),
            "todo: 2 items, 1 done"
        );
        assert_eq!(summary(&json!({"items": []})), "todo: clear the plan");
        assert_eq!(summary(&json!({})), "todo");
        assert_eq!(
            crate::engine::tools::summary(
                "todo",
                &json!({"items": [{"text": "a", "status": "completed"}]})
            ),
            "todo: 1 item, 1 done"
        );
    }
}
