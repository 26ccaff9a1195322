//! Which language servers exist: the built-in table (found on `PATH` without configuration) and
//! the config file's `[lsp.NAME]` tables, which add a server or change or turn off a built-in one.
//!
//! A file goes to the first enabled server, in this order, that handles its extension and whose
//! program is found: the config file's own servers, then the built-in ones (Python prefers
//! basedpyright, then pyright, then pylsp).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// One language server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// Its name (`pylsp`, `typescript`, or the config table's).
    pub name: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// File extensions it handles (without the dot, lower case).
    pub extensions: Vec<String>,
    /// Files or folders that mark a project's root, nearest first; the workspace when none is
    /// found between a file and the workspace.
    pub root_markers: Vec<String>,
    /// Variables set for it on top of flower-tui's environment.
    pub env: BTreeMap<String, String>,
    pub enabled: bool,
    /// From the built-in table (else from the config file).
    pub builtin: bool,
}

impl ServerSpec {
    fn builtin(name: &str, command: &[&str], extensions: &[&str], markers: &[&str]) -> Self {
        let strings = |s: &[&str]| s.iter().map(|x| (*x).to_string()).collect();
        ServerSpec {
            name: name.to_string(),
            command: strings(command),
            extensions: strings(extensions),
            root_markers: strings(markers),
            env: BTreeMap::new(),
            enabled: true,
            builtin: true,
        }
    }

    /// Whether it handles `path` (by its extension).
    pub fn handles(&self, path: &Path) -> bool {
        extension(path).is_some_and(|e| self.extensions.contains(&e))
    }

    /// The program, as written.
    pub fn program(&self) -> &str {
        self.command.first().map_or("", String::as_str)
    }
}

const PYTHON: &[&str] = &["py", "pyi"];
const PYTHON_ROOTS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "pyrightconfig.json",
    "requirements.txt",
];
const TS: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];
const C: &[&str] = &["c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx"];

/// The servers flower-tui knows without configuration, in order of preference.
pub fn builtins() -> Vec<ServerSpec> {
    vec![
        ServerSpec::builtin(
            "basedpyright",
            &["basedpyright-langserver", "--stdio"],
            PYTHON,
            PYTHON_ROOTS,
        ),
        ServerSpec::builtin(
            "pyright",
            &["pyright-langserver", "--stdio"],
            PYTHON,
            PYTHON_ROOTS,
        ),
        ServerSpec::builtin("pylsp", &["pylsp"], PYTHON, PYTHON_ROOTS),
        ServerSpec::builtin(
            "typescript",
            &["typescript-language-server", "--stdio"],
            TS,
            &["tsconfig.json", "jsconfig.json", "package.json"],
        ),
        ServerSpec::builtin(
            "rust-analyzer",
            &["rust-analyzer"],
            &["rs"],
            &["Cargo.lock"],
        ),
        ServerSpec::builtin("gopls", &["gopls"], &["go"], &["go.work", "go.mod"]),
        ServerSpec::builtin(
            "clangd",
            &["clangd"],
            C,
            &["compile_commands.json", "compile_flags.txt", ".clangd"],
        ),
    ]
}

/// The language id a server is told for `path`.
pub fn language_id(path: &Path) -> String {
    let ext = extension(path).unwrap_or_default();
    let id = match ext.as_str() {
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "rs" => "rust",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" => "cpp",
        other => other,
    };
    id.to_string()
}

/// The extension of `path`, lower case.
pub fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// Why an `[lsp.NAME]` table is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[lsp.{name}]: {why}")]
pub struct LspConfigError {
    pub name: String,
    pub why: String,
}

/// The built-in servers with the config file's `[lsp.NAME]` tables applied: a table named like a
/// built-in one changes it (any key), another adds a server (`command` and `extensions`
/// required), which is tried before the built-in ones.
pub fn with_config(table: Option<&toml::Value>) -> Result<Vec<ServerSpec>, LspConfigError> {
    let mut servers = builtins();
    let Some(table) = table else {
        return Ok(servers);
    };
    let err = |name: &str, why: String| LspConfigError {
        name: name.to_string(),
        why,
    };
    let json = serde_json::to_value(table).map_err(|e| err("*", e.to_string()))?;
    let Some(tables) = json.as_object() else {
        return Err(err("*", "`lsp` must be a table of tables".into()));
    };
    let mut added = Vec::new();
    for (name, keys) in tables {
        let Some(keys) = keys.as_object() else {
            return Err(err(name, "must be a table".into()));
        };
        let mut spec = match servers.iter().position(|s| s.name == *name) {
            Some(i) => servers.remove(i),
            None => ServerSpec {
                name: name.clone(),
                command: Vec::new(),
                extensions: Vec::new(),
                root_markers: Vec::new(),
                env: BTreeMap::new(),
                enabled: true,
                builtin: false,
            },
        };
        apply(&mut spec, keys).map_err(|why| err(name, why))?;
        if spec.enabled && (spec.command.is_empty() || spec.extensions.is_empty()) {
            return Err(err(
                name,
                "needs `command = [\"program\", …]` and `extensions = [\"ext\", …]`".into(),
            ));
        }
        if spec.builtin {
            servers.push(spec);
        } else {
            added.push(spec);
        }
    }
    // The built-in ones keep their order of preference, changed or not.
    let order: Vec<String> = builtins().into_iter().map(|s| s.name).collect();
    servers.sort_by_key(|s| order.iter().position(|n| *n == s.name));
    added.extend(servers);
    Ok(added)
}

fn apply(spec: &mut ServerSpec, keys: &serde_json::Map<String, Value>) -> Result<(), String> {
    for (key, value) in keys {
        match key.as_str() {
            "command" => spec.command = strings(key, value)?,
            "extensions" => {
                spec.extensions = strings(key, value)?
                    .into_iter()
                    .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                    .collect();
            }
            "root_markers" => spec.root_markers = strings(key, value)?,
            "enabled" => {
                spec.enabled = value
                    .as_bool()
                    .ok_or_else(|| "`enabled` must be true or false".to_string())?;
            }
            "env" => {
                let Some(vars) = value.as_object() else {
                    return Err("`env` must be a table of strings".into());
                };
                for (k, v) in vars {
                    let v = v
                        .as_str()
                        .ok_or_else(|| format!("`env.{k}` must be a string"))?;
                    spec.env.insert(k.clone(), v.to_string());
                }
            }
            other => {
                return Err(format!(
                    "unknown key `{other}` (known: command, extensions, root_markers, env, enabled)"
                ));
            }
        }
    }
    Ok(())
}

fn strings(key: &str, value: &Value) -> Result<Vec<String>, String> {
    let err = || format!("`{key}` must be a list of strings");
    let list = value.as_array().ok_or_else(err)?;
    let out: Vec<String> = list
        .iter()
        .map(|v| v.as_str().map(str::to_string).ok_or_else(err))
        .collect::<Result<_, _>>()?;
    if key == "command" && out.first().is_none_or(|p| p.trim().is_empty()) {
        return Err("`command` must name a program".into());
    }
    Ok(out)
}

/// Where `program` is: itself when it has a `/`, else the first executable of that name on
/// `path_var` (a `PATH` value). A rustup proxy counts only when a toolchain has its tool: every
/// rustup install has a `rust-analyzer` proxy, with the component or without it.
pub fn find_program(program: &str, path_var: Option<&str>) -> Option<PathBuf> {
    let found = if program.contains('/') {
        let p = PathBuf::from(program);
        is_executable(&p).then_some(p)
    } else {
        std::env::split_paths(path_var?)
            .map(|dir| dir.join(program))
            .find(|p| is_executable(p))
    };
    found.filter(|p| !is_idle_rustup_proxy(p, rustup_home().as_deref()))
}

/// Where rustup keeps its toolchains (`RUSTUP_HOME`, else `~/.rustup`).
fn rustup_home() -> Option<PathBuf> {
    std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from(std::env::var_os("HOME")?).join(".rustup")))
}

/// `p` is rustup itself under another name (a proxy: a link to the `rustup` beside it) and no
/// toolchain under `rustup_home` has the tool it names. Asked of the file system only: running
/// the proxy could install a toolchain.
fn is_idle_rustup_proxy(p: &Path, rustup_home: Option<&Path>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(name) = p.file_name().filter(|n| *n != "rustup") else {
        return false;
    };
    let same_file = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    };
    let to_rustup = std::fs::canonicalize(p)
        .is_ok_and(|t| t.file_name().is_some_and(|n| n == "rustup"))
        || same_file(p, &p.with_file_name("rustup"));
    if !to_rustup {
        return false;
    }
    let Some(toolchains) = rustup_home.and_then(|h| std::fs::read_dir(h.join("toolchains")).ok())
    else {
        return true;
    };
    !toolchains
        .flatten()
        .any(|t| is_executable(&t.path().join("bin").join(name)))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The root of `file` for `spec`: the nearest folder between the file and `workspace` holding one
/// of its markers, else `workspace`.
pub fn root_of(spec: &ServerSpec, file: &Path, workspace: &Path) -> PathBuf {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        if spec.root_markers.iter().any(|m| d.join(m).exists()) {
            return d.to_path_buf();
        }
        if d == workspace {
            break;
        }
        dir = d.parent();
    }
    workspace.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        let v: toml::Table = toml::from_str(text).unwrap();
        v.get("lsp").cloned().unwrap()
    }

    #[test]
    fn config_tables_change_turn_off_and_add_servers() {
        let servers = with_config(Some(&table(
            r#"
            [lsp.pylsp]
            enabled = false
            [lsp.typescript]
            command = ["/opt/tsls", "--stdio"]
            env = { TSS_LOG = "-level verbose" }
            [lsp.zls]
            command = ["zls"]
            extensions = [".zig", "ZON"]
            "#,
        )))
        .unwrap();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "zls",
                "basedpyright",
                "pyright",
                "pylsp",
                "typescript",
                "rust-analyzer",
                "gopls",
                "clangd"
            ]
        );
        assert_eq!(servers[0].extensions, ["zig", "zon"]);
        assert!(!servers[3].enabled);
        assert_eq!(servers[4].command, ["/opt/tsls", "--stdio"]);
        assert_eq!(servers[4].env["TSS_LOG"], "-level verbose");
        assert_eq!(servers[4].extensions, builtins()[3].extensions);
    }

    #[test]
    fn a_wrong_table_is_named_with_what_is_wrong() {
        let cases = [
            ("[lsp.x]\ncommand = [\"x\"]\n", "[lsp.x]: needs `command"),
            (
                "[lsp.pylsp]\ncommand = []\n",
                "[lsp.pylsp]: `command` must name a program",
            ),
            (
                "[lsp.pylsp]\nenabled = \"no\"\n",
                "[lsp.pylsp]: `enabled` must be true or false",
            ),
            (
                "[lsp.pylsp]\nargs = []\n",
                "[lsp.pylsp]: unknown key `args`",
            ),
            (
                "[lsp.gopls]\nextensions = \"go\"\n",
                "[lsp.gopls]: `extensions` must be a list",
            ),
        ];
        for (text, want) in cases {
            let e = with_config(Some(&table(text))).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text}: {e}");
        }
    }

    #[test]
    fn the_root_is_the_nearest_marked_folder_inside_the_workspace() {
        let ws = tempfile::tempdir().unwrap();
        let ws = ws.path();
        std::fs::create_dir_all(ws.join("pkg/src")).unwrap();
        std::fs::write(ws.join("pkg/pyproject.toml"), "").unwrap();
        let py = &builtins()[2];
        assert_eq!(root_of(py, &ws.join("pkg/src/a.py"), ws), ws.join("pkg"));
        assert_eq!(root_of(py, &ws.join("b.py"), ws), ws);
        assert!(py.handles(Path::new("x/A.PY")) && !py.handles(Path::new("Makefile")));
        assert_eq!(language_id(Path::new("a.tsx")), "typescriptreact");
    }

    #[test]
    fn programs_are_found_on_the_path_given() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("fake-ls");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        let path = format!("/nonexistent:{}", dir.path().display());
        assert_eq!(find_program("fake-ls", Some(&path)), None);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_program("fake-ls", Some(&path)), Some(bin.clone()));
        assert_eq!(find_program(bin.to_str().unwrap(), None), Some(bin));
        assert_eq!(find_program("fake-ls", None), None);
    }

    #[test]
    fn a_rustup_proxy_counts_only_when_a_toolchain_has_its_tool() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (bin, home) = (dir.path().join("bin"), dir.path().join("rustup-home"));
        std::fs::create_dir_all(&bin).unwrap();
        let rustup = bin.join("rustup");
        std::fs::write(&rustup, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(&rustup, std::fs::Permissions::from_mode(0o755)).unwrap();
        let linked = bin.join("rust-analyzer");
        std::os::unix::fs::symlink(&rustup, &linked).unwrap();
        let hard = bin.join("clangd");
        std::fs::hard_link(&rustup, &hard).unwrap();
        for proxy in [&linked, &hard] {
            // No rustup home, or no toolchain with the tool: the proxy cannot run it.
            assert!(is_idle_rustup_proxy(proxy, None));
            std::fs::create_dir_all(home.join("toolchains/stable/bin")).unwrap();
            assert!(is_idle_rustup_proxy(proxy, Some(&home)));
        }
        let tool = home.join("toolchains/stable/bin/rust-analyzer");
        std::fs::write(&tool, "").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!is_idle_rustup_proxy(&linked, Some(&home)));
        assert!(is_idle_rustup_proxy(&hard, Some(&home)));
        // rustup itself, and a program that is no link to it, are no proxies.
        assert!(!is_idle_rustup_proxy(&rustup, None));
        let own = bin.join("gopls");
        std::fs::write(&own, "#!/bin/sh\n").unwrap();
        assert!(!is_idle_rustup_proxy(&own, None));
    }
}
