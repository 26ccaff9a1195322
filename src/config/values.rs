//! How one flag value or config-file value is read. A setting that takes one of a few words (a
//! provider, an output format, a log level, …) is an enum that implements [`Choice`]: the flag's
//! value parser ([`flag`]) and the file's key ([`FileWord`]) read it through the same words, once,
//! where it enters, and everything after carries the enum. Token counts (`200000`, `200k`, `1m`)
//! are read here too, for `--window`, `--headroom` and their keys.

use serde::{Deserialize, Deserializer};

use super::error::ConfigError;

/// A setting that is one of a few words.
pub(crate) trait Choice: Sized {
    /// The accepted values, as a flag's error lists them.
    const ACCEPTED: &'static str;
    /// The accepted values, as a config-file key's error lists them.
    const FILE_ACCEPTED: &'static str = Self::ACCEPTED;

    /// The value a word names, if any.
    fn from_word(word: &str) -> Option<Self>;

    /// A config-file value: a TOML string read by [`Choice::from_word`]. A key that also takes
    /// other TOML types (a number of seconds, say) reads them here. A value of a type the key
    /// never takes is the decoder's error, which names the file.
    fn from_file<'de, D: Deserializer<'de>>(d: D) -> Result<FileWord<Self>, D::Error> {
        let word = String::deserialize(d)?;
        Ok(match Self::from_word(&word) {
            Some(v) => FileWord::Valid(v),
            None => FileWord::Invalid(word),
        })
    }
}

/// A config-file value of a [`Choice`] key as read: the value, or what was written instead. The
/// error for the latter names the key and is raised when the key is resolved ([`file_word`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileWord<T> {
    Valid(T),
    /// What was written (or the kind of value, when no word was written).
    Invalid(String),
}

impl<'de, T: Choice> Deserialize<'de> for FileWord<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::from_file(d)
    }
}

/// The config file's `key`, checked: None when the file does not set it.
pub(crate) fn file_word<T: Choice>(
    key: &'static str,
    value: Option<FileWord<T>>,
) -> Result<Option<T>, ConfigError> {
    match value {
        None => Ok(None),
        Some(FileWord::Valid(v)) => Ok(Some(v)),
        Some(FileWord::Invalid(got)) => Err(ConfigError::BadValue {
            key,
            accepted: T::FILE_ACCEPTED,
            got,
        }),
    }
}

/// The config file's whole-number `key`, which must be at least 1.
pub(crate) fn at_least_one<N: Copy + Into<u64>>(
    key: &'static str,
    accepted: &'static str,
    value: Option<N>,
) -> Result<Option<N>, ConfigError> {
    match value {
        Some(n) if n.into() == 0 => Err(ConfigError::BadValue {
            key,
            accepted,
            got: "0".into(),
        }),
        other => Ok(other),
    }
}

/// Why a flag's value was refused; clap puts it after `invalid value 'X' for '--flag'`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FlagValueError {
    #[error("expected a positive token count like 200000 or 200k, got '{got}'")]
    Tokens { got: String },
    #[error("accepted values: {accepted} (got '{got}')")]
    NotAccepted { accepted: &'static str, got: String },
    /// The same, without repeating the value (the `--mcp-json` flag's wording).
    #[error("accepted values: {accepted}")]
    NotOneOf { accepted: &'static str },
}

/// The value parser of a flag that takes a [`Choice`].
pub(crate) fn flag<T: Choice>(value: &str) -> Result<T, FlagValueError> {
    T::from_word(value).ok_or_else(|| FlagValueError::NotAccepted {
        accepted: T::ACCEPTED,
        got: value.to_string(),
    })
}

/// A token count: `200000`, `200_000`, `200k`, `1.5m`; at least 1 once rounded.
pub(crate) fn parse_tokens(s: &str) -> Result<u64, FlagValueError> {
    let t = s.trim().replace('_', "");
    let (num, mult) = if let Some(n) = t.strip_suffix(['k', 'K']) {
        (n, 1_000.0)
    } else if let Some(n) = t.strip_suffix(['m', 'M']) {
        (n, 1_000_000.0)
    } else {
        (t.as_str(), 1.0)
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && (v * mult).round() >= 1.0 => Ok((v * mult).round() as u64),
        _ => Err(FlagValueError::Tokens { got: s.to_string() }),
    }
}

/// A token count in the config file: an integer, or a string the flag would accept (`"200k"`).
/// A wrong one is the decoder's error, so it names the file and the key.
pub(crate) fn file_tokens<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error as _;
    const ACCEPTED: &str = "accepted values: a positive token count like 200000 or \"200k\"";
    match toml::Value::deserialize(d)? {
        toml::Value::Integer(n) if n > 0 => Ok(Some(n.unsigned_abs())),
        toml::Value::Integer(n) => Err(D::Error::custom(format!("{ACCEPTED} (got {n})"))),
        toml::Value::String(s) => parse_tokens(&s)
            .map(Some)
            .map_err(|_| D::Error::custom(format!("{ACCEPTED} (got \"{s}\")"))),
        other => Err(D::Error::custom(format!(
            "{ACCEPTED} (got {})",
            a_type(&other)
        ))),
    }
}

/// `a string`, `an array`: a TOML value's type with its article.
fn a_type(v: &toml::Value) -> String {
    let t = v.type_str();
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {t}")
}
