//! Reading a tool call's arguments leniently (models send `"10"` for 10 and `"true"` for true) with
//! clear messages when something is missing or of the wrong type.

use serde_json::{Map, Value};

use super::ToolError;

/// The arguments of one call, with the tool's name for error messages.
pub(crate) struct Args<'a> {
    tool: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub(crate) fn new(tool: &'a str, map: &'a Map<String, Value>) -> Self {
        Args { tool, map }
    }

    /// The tool's name.
    pub(crate) fn tool(&self) -> &'a str {
        self.tool
    }

    /// An argument as sent, if present.
    pub(crate) fn raw(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// A required string argument.
    pub(crate) fn str(&self, key: &str) -> Result<&'a str, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Err(ToolError(format!(
                "`{}` needs the argument `{key}` (a string), which is missing.",
                self.tool
            ))),
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    /// An optional string argument; an empty string counts as absent.
    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<&'a str>, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    /// An optional non-negative integer argument.
    pub(crate) fn opt_u64(&self, key: &str) -> Result<Option<u64>, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => as_u64(v)
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, "a non-negative integer", v)),
        }
    }

    /// An optional non-negative number argument (seconds may have a fraction).
    pub(crate) fn opt_f64(&self, key: &str) -> Result<Option<f64>, ToolError> {
        let bad = |v: &Value| self.wrong_type(key, "a non-negative number", v);
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Number(n)) => match n.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(bad(v)),
            },
            Some(v @ Value::String(s)) => match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(bad(v)),
            },
            Some(v) => Err(bad(v)),
        }
    }

    /// An optional boolean argument.
    pub(crate) fn opt_bool(&self, key: &str) -> Result<Option<bool>, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(other) => Err(self.wrong_type(key, "true or false", other)),
        }
    }

    fn wrong_type(&self, key: &str, want: &str, got: &Value) -> ToolError {
        let mut shown = got.to_string();
        if shown.chars().count() > 200 {
            shown = shown.chars().take(200).collect::<String>() + "…";
        }
        ToolError(format!(
            "`{}`: the argument `{key}` must be {want}, got {shown}.",
            self.tool
        ))
    }
}

/// A non-negative integer from a JSON number (`10`, `10.0`) or a numeric string (`"10"`).
pub(crate) fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0 && *x < 1e18)
                .map(|x| x as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with<T>(v: Value, f: impl FnOnce(&Args) -> T) -> T {
        let map = v.as_object().cloned().unwrap();
        f(&Args::new("t", &map))
    }

    #[test]
    fn lenient_numbers_and_bools() {
        assert_eq!(as_u64(&json!(10)), Some(10));
        assert_eq!(as_u64(&json!(10.0)), Some(10));
        assert_eq!(as_u64(&json!(" 7 ")), Some(7));
        assert_eq!(as_u64(&json!(-1)), None);
        assert_eq!(as_u64(&json!(1.5)), None);
        with(json!({"b": "TRUE", "c": false}), |a| {
            assert_eq!(a.opt_bool("b").unwrap(), Some(true));
            assert_eq!(a.opt_bool("c").unwrap(), Some(false));
            assert_eq!(a.opt_bool("d").unwrap(), None);
        });
        with(json!({"t": "2.5", "u": -3}), |a| {
            assert_eq!(a.opt_f64("t").unwrap(), Some(2.5));
            assert!(
                a.opt_f64("u")
                    .unwrap_err()
                    .0
                    .contains("non-negative number")
            );
        });
    }

    #[test]
    fn missing_and_wrong_types_are_named() {
        with(json!({"path": 3, "e": ""}), |a| {
            let e = a.str("command").unwrap_err().0;
            assert!(e.contains("`command`") && e.contains("missing"), "{e}");
            let e = a.str("path").unwrap_err().0;
            assert!(e.contains("must be a string, got 3"), "{e}");
            assert_eq!(a.opt_str("e").unwrap(), None);
            assert!(a.opt_u64("path").is_ok());
        });
    }
}
