//! Unit tests of the config file: the key list agrees with the concerns' keys, and of several
//! problems the first in the file is the one reported.

use std::path::Path;

use serde::de::{Deserialize, Deserializer, Error as _, Visitor};

use super::*;

/// The keys a struct's derived `Deserialize` accepts (what it hands the deserializer).
fn fields_of<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(Self::Error::custom("probed"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

#[test]
fn the_key_list_is_every_concerns_keys_once() {
    let mut concerns: Vec<&str> = [
        fields_of::<ProviderKeys>(),
        fields_of::<ContextKeys>(),
        fields_of::<PlaceKeys>(),
        fields_of::<ToolKeys>(),
        fields_of::<FrontKeys>(),
        fields_of::<SandboxKeys>(),
        fields_of::<crate::config::hooks::HookKeys>(),
        fields_of::<crate::config::lsp::LspKeys>(),
        fields_of::<crate::config::web::WebKeys>(),
    ]
    .concat();
    assert!(concerns.len() > 30, "{concerns:?}");
    concerns.sort_unstable();
    let before = concerns.len();
    concerns.dedup();
    assert_eq!(concerns.len(), before, "a key read by two concerns");
    let mut listed = KEYS.to_vec();
    listed.sort_unstable();
    assert_eq!(listed, concerns, "file::KEYS and the concerns' keys differ");
}

fn problem(text: &str) -> String {
    parse(Path::new("c.toml"), text)
        .map(|_| String::new())
        .unwrap_or_else(|e| e.to_string())
}

#[test]
fn the_first_problem_in_the_file_is_reported() {
    assert_eq!(
        problem("colour = 1\nwindow = \"big\"\n"),
        format!(
            "config c.toml: unknown field `colour`, expected one of {}",
            KEYS.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    );
    assert!(
        problem("window = \"big\"\ncolour = 1\n").starts_with("config c.toml: key `window`: "),
        "the later unknown key waits"
    );
    // Keys of different concerns: the file's order decides, not the concerns'.
    assert_eq!(
        problem("theme = 3\nwindow = true\n"),
        "config c.toml: key `theme`: invalid type: integer `3`, expected a string"
    );
    assert!(
        problem("window = true\ntheme = 3\n").starts_with("config c.toml: key `window`: "),
        "{}",
        problem("window = true\ntheme = 3\n")
    );
    assert_eq!(problem("[mcp_servers.x]\ncommand = \"a\"\n"), "");
    assert!(problem("window = \n").starts_with("config c.toml: "));
}
