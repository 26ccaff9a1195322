//! Themes: named ratatui styles loaded from `themes/*.toml` (built in) or a user override file.
//!
//! A theme file has an optional top-level `syntax = "<syntect theme>"` (or `"none"`) and a `[styles]`
//! table. Each style is a colour (its foreground) or a table of `fg`, `bg`, `bold`, `italic`,
//! `underline`, `dim`, `reversed`, `crossed`. Colours are `#rrggbb`, an ANSI name or a number 0–255.
//! A user file may leave keys out: they keep the built-in value of the same theme (or `dark`).

use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use toml::{Table, Value};

use super::highlight;

/// Why a theme could not be loaded; the text names the theme or its file, and the key.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// A name that is empty, a path, or hidden.
    #[error("invalid theme name `{0}`")]
    InvalidName(String),
    /// Neither a user file nor a built-in theme has this name.
    #[error("unknown theme `{0}` (built in: dark, light)")]
    Unknown(String),
    /// A built-in theme does not parse (a build mistake; its test catches it).
    #[error("built-in theme {name}: {problem}")]
    BuiltIn {
        /// The theme.
        name: String,
        /// What is wrong in it.
        problem: ThemeFileError,
    },
    /// The user file could not be read.
    #[error("theme {}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The user file says something a theme cannot.
    #[error("theme {}: {problem}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        problem: ThemeFileError,
    },
}

/// What is wrong inside a theme file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThemeFileError {
    /// Not TOML at all (the parser's message).
    #[error("not valid TOML: {0}")]
    Toml(String),
    /// `syntax` is not a string.
    #[error("key `syntax`: expected a string")]
    SyntaxNotString,
    /// `syntax` names a syntect theme that does not exist.
    #[error(
        "key `syntax`: unknown syntect theme `{0}` (available: {available}, or \"none\")",
        available = highlight::theme_names().join(", ")
    )]
    UnknownSyntax(String),
    /// `styles` is not a table.
    #[error("key `styles`: expected a table")]
    StylesNotTable,
    /// A key under `[styles]` that names no style.
    #[error("unknown style key `styles.{0}` (known: {known})", known = STYLE_KEYS.join(", "))]
    UnknownStyleKey(String),
    /// A style's value is wrong.
    #[error("key `styles.{key}`: {problem}")]
    Style {
        /// The style key.
        key: String,
        /// What is wrong with its value.
        problem: StyleError,
    },
    /// A top-level key other than `syntax` and `styles`.
    #[error("unknown key `{0}` (expected `syntax`, `styles`)")]
    UnknownKey(String),
}

/// What is wrong with one style's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StyleError {
    /// The style is a colour, and that colour is wrong.
    #[error(transparent)]
    Colour(#[from] ColourError),
    /// `fg` or `bg` is a wrong colour.
    #[error("`{attribute}`: {problem}")]
    AttributeColour {
        /// `fg` or `bg`.
        attribute: &'static str,
        /// What is wrong with the colour.
        problem: ColourError,
    },
    /// A modifier (`bold`, …) that is not true or false.
    #[error("`{0}`: expected true or false")]
    NotABool(String),
    /// A key of the style table that is neither a colour nor a modifier.
    #[error("unknown attribute `{0}`")]
    UnknownAttribute(String),
    /// Neither a colour nor a table.
    #[error("expected a colour or a table")]
    NotAStyle,
}

/// What is wrong with a colour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ColourError {
    /// A number outside 0–255.
    #[error("colour index {0} is not in 0-255")]
    IndexOutOfRange(i64),
    /// Neither a number nor a string.
    #[error("expected a colour string")]
    NotAString,
    /// `#` followed by something other than six hex digits.
    #[error("`{0}` is not a #rrggbb colour")]
    NotHex(String),
    /// A name that is no ANSI colour.
    #[error("unknown colour `{0}` (use #rrggbb, an ANSI name or 0-255)")]
    UnknownName(String),
}

const DARK: &str = include_str!("../../../themes/dark.toml");
const LIGHT: &str = include_str!("../../../themes/light.toml");

macro_rules! theme_styles {
    ($($(#[doc = $doc:expr])* $name:ident),* $(,)?) => {
        /// Every style the renderer uses, by name. `PartialEq` lets caches notice a theme change.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Theme {
            $($(#[doc = $doc])* pub $name: Style,)*
            /// The syntect theme for fenced code blocks; `None` renders code without highlighting.
            pub syntax: Option<String>,
        }

        /// The style keys a theme file may set under `[styles]`, in file order.
        pub(crate) const STYLE_KEYS: &[&str] = &[$(stringify!($name)),*];

        impl Theme {
            /// A theme with every style empty and no syntax highlighting.
            fn empty() -> Theme {
                Theme { $($name: Style::new(),)* syntax: None }
            }

            fn slot(&mut self, key: &str) -> Option<&mut Style> {
                match key {
                    $(stringify!($name) => Some(&mut self.$name),)*
                    _ => None,
                }
            }
        }
    };
}

theme_styles! {
    /// Body text.
    text,
    /// Secondary text: hints, timings, collapsed-output notes.
    dim,
    /// Highlights: the spinner frame, the user prompt marker.
    accent,
    /// The user's messages.
    user,
    /// Assistant prose.
    assistant,
    /// Thinking text.
    thinking,
    /// Tool-call headers.
    tool,
    /// Tool output.
    tool_output,
    /// Errors.
    error,
    /// Warnings, retries, approval prompts.
    warning,
    /// Notices.
    notice,
    /// Success marks (an approved tool call).
    success,
    /// Gauge fill below `warn_at`.
    gauge_ok,
    /// Gauge fill from `warn_at` to `at`.
    gauge_warn,
    /// Gauge fill from `at` to the window.
    gauge_due,
    /// Gauge fill at or over the window.
    gauge_over,
    /// The unfilled part of the gauge.
    gauge_empty,
    /// The gauge's threshold ticks.
    tick,
    /// Generation dividers.
    divider,
    /// Markdown headings.
    heading,
    /// Fenced code blocks (a background here fills the whole line).
    code_bg,
    /// Inline code.
    inline_code,
    /// Link text.
    link,
    /// Block quotes.
    quote,
    /// Pane borders.
    border,
    /// The focused pane's border.
    border_focus,
    /// The status line (its background fills the row).
    status_bg,
    /// The `DEMO` badge.
    badge,
    /// Key names in hints.
    key,
    /// `## Heading` lines in the side editor.
    editor_heading,
    /// Selected text in the editor.
    selection,
    /// The editor cursor.
    cursor,
    /// The spinner frame.
    spinner,
    /// Lines a diff adds (`+`).
    diff_added,
    /// Lines a diff removes (`-`).
    diff_removed,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::builtin("dark").unwrap_or_else(|_| Theme::plain())
    }
}

impl Theme {
    /// Loads theme `name` (`"dark"`, `"light"` or a user theme): a user file
    /// `<config_dir>/flower/themes/<name>.toml` first, then the built-in `themes/<name>.toml`.
    /// `no_color` (NO_COLOR) gives [`Theme::plain`].
    pub(crate) fn load(name: &str, no_color: bool) -> Result<Theme, ThemeError> {
        let dir = dirs::config_dir().map(|d| d.join("flower").join("themes"));
        Theme::load_from(name, no_color, dir.as_deref())
    }

    /// [`Theme::load`] with the user theme directory given (`None`: built-in themes only).
    pub(crate) fn load_from(
        name: &str,
        no_color: bool,
        user_dir: Option<&Path>,
    ) -> Result<Theme, ThemeError> {
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(ThemeError::InvalidName(name.to_string()));
        }
        if no_color {
            return Ok(Theme::plain());
        }
        let user_file: Option<PathBuf> = user_dir.map(|d| d.join(format!("{name}.toml")));
        match user_file.filter(|p| p.is_file()) {
            Some(path) => {
                let text = match std::fs::read_to_string(&path) {
                    Ok(text) => text,
                    Err(source) => return Err(ThemeError::Unreadable { path, source }),
                };
                let base = Theme::builtin(name).or_else(|_| Theme::builtin("dark"))?;
                match base.overlay(&text).and_then(Theme::check_syntax) {
                    Ok(theme) => Ok(theme),
                    Err(problem) => Err(ThemeError::Invalid { path, problem }),
                }
            }
            None => Theme::builtin(name),
        }
    }

    /// A built-in theme by name (`dark` or `light`); never reads the disk.
    pub fn builtin(name: &str) -> Result<Theme, ThemeError> {
        let text = match name {
            "dark" => DARK,
            "light" => LIGHT,
            other => return Err(ThemeError::Unknown(other.to_string())),
        };
        Theme::empty()
            .overlay(text)
            .map_err(|problem| ThemeError::BuiltIn {
                name: name.to_string(),
                problem,
            })
    }

    /// The NO_COLOR theme: modifiers only (bold, italic, dim, reverse), never a colour.
    pub fn plain() -> Theme {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let dim = Style::new().add_modifier(Modifier::DIM);
        let italic = Style::new().add_modifier(Modifier::ITALIC);
        let reversed = Style::new().add_modifier(Modifier::REVERSED);
        Theme {
            dim,
            accent: bold,
            user: bold,
            thinking: dim.add_modifier(Modifier::ITALIC),
            tool: bold,
            tool_output: dim,
            error: bold,
            warning: bold,
            notice: italic,
            gauge_due: bold,
            gauge_over: reversed,
            gauge_empty: dim,
            tick: bold,
            heading: bold,
            inline_code: bold,
            link: Style::new().add_modifier(Modifier::UNDERLINED),
            quote: italic,
            border: dim,
            border_focus: bold,
            badge: reversed,
            key: bold,
            editor_heading: bold,
            selection: reversed,
            cursor: reversed,
            spinner: bold,
            diff_removed: dim,
            ..Theme::empty()
        }
    }

    /// Fails when `syntax` names a syntect theme that does not exist.
    fn check_syntax(self) -> Result<Theme, ThemeFileError> {
        match &self.syntax {
            Some(name) if !highlight::theme_names().contains(name) => {
                Err(ThemeFileError::UnknownSyntax(name.clone()))
            }
            _ => Ok(self),
        }
    }

    /// This theme with the keys of a TOML theme file applied over it.
    pub(crate) fn overlay(mut self, text: &str) -> Result<Theme, ThemeFileError> {
        let table: Table = text.parse().map_err(|e: toml::de::Error| {
            ThemeFileError::Toml(e.message().trim_end().to_string())
        })?;
        for (key, value) in &table {
            match key.as_str() {
                "syntax" => {
                    let name = value.as_str().ok_or(ThemeFileError::SyntaxNotString)?;
                    self.syntax = (!name.eq_ignore_ascii_case("none")).then(|| name.to_string());
                }
                "styles" => {
                    let styles = value.as_table().ok_or(ThemeFileError::StylesNotTable)?;
                    for (name, spec) in styles {
                        let slot = self
                            .slot(name)
                            .ok_or_else(|| ThemeFileError::UnknownStyleKey(name.clone()))?;
                        *slot = parse_style(spec).map_err(|problem| ThemeFileError::Style {
                            key: name.clone(),
                            problem,
                        })?;
                    }
                }
                other => return Err(ThemeFileError::UnknownKey(other.to_string())),
            }
        }
        Ok(self)
    }
}

/// A style from a colour string / number (the foreground) or a table of attributes.
fn parse_style(value: &Value) -> Result<Style, StyleError> {
    match value {
        Value::String(_) | Value::Integer(_) => Ok(Style::new().fg(parse_color(value)?)),
        Value::Table(t) => {
            let mut style = Style::new();
            for (k, v) in t {
                let flag = |m: Modifier, s: Style| -> Result<Style, StyleError> {
                    match v.as_bool() {
                        Some(true) => Ok(s.add_modifier(m)),
                        Some(false) => Ok(s.remove_modifier(m)),
                        None => Err(StyleError::NotABool(k.clone())),
                    }
                };
                let colour = |attribute: &'static str| {
                    parse_color(v)
                        .map_err(|problem| StyleError::AttributeColour { attribute, problem })
                };
                style = match k.as_str() {
                    "fg" => style.fg(colour("fg")?),
                    "bg" => style.bg(colour("bg")?),
                    "bold" => flag(Modifier::BOLD, style)?,
                    "italic" => flag(Modifier::ITALIC, style)?,
                    "underline" => flag(Modifier::UNDERLINED, style)?,
                    "dim" => flag(Modifier::DIM, style)?,
                    "reversed" => flag(Modifier::REVERSED, style)?,
                    "crossed" => flag(Modifier::CROSSED_OUT, style)?,
                    other => return Err(StyleError::UnknownAttribute(other.to_string())),
                };
            }
            Ok(style)
        }
        _ => Err(StyleError::NotAStyle),
    }
}

/// `#rrggbb`, an ANSI colour name, or an index 0–255 (as a number or a string).
pub(crate) fn parse_color(value: &Value) -> Result<Color, ColourError> {
    if let Some(n) = value.as_integer() {
        return u8::try_from(n)
            .map(Color::Indexed)
            .map_err(|_| ColourError::IndexOutOfRange(n));
    }
    let s = value.as_str().ok_or(ColourError::NotAString)?;
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() == 6 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
            return Ok(Color::Rgb(byte(0), byte(2), byte(4)));
        }
        return Err(ColourError::NotHex(s.to_string()));
    }
    if let Ok(n) = s.parse::<u8>() {
        return Ok(Color::Indexed(n));
    }
    let norm: String = s
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .collect::<String>()
        .to_ascii_lowercase()
        .replace("grey", "gray");
    let color = match norm.as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" => Color::Gray,
        "darkgray" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return Err(ColourError::UnknownName(s.to_string())),
    };
    Ok(color)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_set_every_key() {
        for name in ["dark", "light"] {
            let text = if name == "dark" { DARK } else { LIGHT };
            let table: Table = text.parse().unwrap();
            let styles = table["styles"].as_table().unwrap();
            for key in STYLE_KEYS {
                assert!(styles.contains_key(*key), "{name}.toml lacks `{key}`");
            }
            let theme = Theme::builtin(name).unwrap();
            assert!(theme.syntax.is_some());
            assert!(
                theme.clone().check_syntax().is_ok(),
                "{name}: syntect theme exists"
            );
            assert_ne!(theme, Theme::plain());
        }
        assert_eq!(
            Theme::builtin("dark").unwrap().gauge_ok.fg,
            Some(Color::Rgb(0x9e, 0xce, 0x6a))
        );
    }

    #[test]
    fn colours_parse() {
        let s = |x: &str| parse_color(&Value::String(x.into()));
        assert_eq!(s("#ff0080"), Ok(Color::Rgb(255, 0, 128)));
        assert_eq!(s("Light_Blue"), Ok(Color::LightBlue));
        assert_eq!(s("dark-grey"), Ok(Color::DarkGray));
        assert_eq!(s("42"), Ok(Color::Indexed(42)));
        assert_eq!(parse_color(&Value::Integer(7)), Ok(Color::Indexed(7)));
        assert!(parse_color(&Value::Integer(256)).is_err());
        assert!(s("#ff00").is_err());
        assert!(s("#gg0000").is_err());
        assert!(
            s("chartreuse")
                .unwrap_err()
                .to_string()
                .contains("chartreuse")
        );
    }

    #[test]
    fn errors_name_the_key() {
        let base = Theme::builtin("dark").unwrap();
        let e = base
            .clone()
            .overlay("[styles]\nerror = \"#12\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("styles.error") && e.contains("#12"), "{e}");
        let e = base
            .clone()
            .overlay("[styles]\nbogus = \"red\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("styles.bogus"), "{e}");
        let e = base
            .clone()
            .overlay("[styles]\ntext = { fg = \"red\", blink = true }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("styles.text") && e.contains("blink"), "{e}");
        let e = base
            .clone()
            .overlay("[styles]\ntext = { bold = 1 }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("styles.text") && e.contains("bold"), "{e}");
        let e = base.clone().overlay("colour = 1").unwrap_err().to_string();
        assert!(e.contains("colour"), "{e}");
        let e = base.overlay("[styles\n").unwrap_err().to_string();
        assert!(e.contains("TOML"), "{e}");
    }

    #[test]
    fn user_file_overrides_some_keys() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("dark.toml"),
            "syntax = \"none\"\n[styles]\nerror = { fg = \"red\", bg = 4, underline = true }\n",
        )
        .unwrap();
        let t = Theme::load_from("dark", false, Some(dir.path())).unwrap();
        let builtin = Theme::builtin("dark").unwrap();
        assert_eq!(
            t.error,
            Style::new()
                .fg(Color::Red)
                .bg(Color::Indexed(4))
                .add_modifier(Modifier::UNDERLINED)
        );
        assert_eq!(t.syntax, None);
        assert_eq!(
            t.gauge_ok, builtin.gauge_ok,
            "keys left out keep the built-in value"
        );

        // A user theme with a new name starts from dark.
        std::fs::write(dir.path().join("mine.toml"), "[styles]\ntext = \"white\"\n").unwrap();
        let mine = Theme::load_from("mine", false, Some(dir.path())).unwrap();
        assert_eq!(mine.text.fg, Some(Color::White));
        assert_eq!(mine.tool, builtin.tool);

        std::fs::write(dir.path().join("light.toml"), "[styles]\ntext = 3.5\n").unwrap();
        let e = Theme::load_from("light", false, Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("light.toml") && e.contains("styles.text"), "{e}");

        std::fs::write(dir.path().join("light.toml"), "syntax = \"Monokai Pro\"\n").unwrap();
        let e = Theme::load_from("light", false, Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("syntax") && e.contains("Monokai Pro") && e.contains("InspiredGitHub"),
            "{e}"
        );

        assert!(Theme::load_from("nope", false, Some(dir.path())).is_err());
        assert!(Theme::load_from("../x", false, Some(dir.path())).is_err());
        assert_eq!(
            Theme::load_from("light", false, None).unwrap(),
            Theme::builtin("light").unwrap()
        );
    }

    #[test]
    fn no_color_has_no_colours() {
        let t = Theme::load_from("dark", true, None).unwrap();
        assert_eq!(t, Theme::plain());
        let mut probe = t.clone();
        for key in STYLE_KEYS {
            let s = probe.slot(key).unwrap();
            assert!(s.fg.is_none() && s.bg.is_none(), "{key} has a colour");
        }
        assert!(t.syntax.is_none());
    }
}
