//! A command line read the way the prefix rule needs it: simple commands (their words, quotes
//! removed) joined by `;`, `&&`, `||`, `|`, `&`, or the reason it is something no prefix covers.

/// How a command line reads for the prefix rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Simple commands (their words, quotes removed) joined by `;`, `&&`, `||`, `|`, `&`.
    Plain(Vec<Vec<String>>),
    /// Something no prefix may cover, and why.
    Complex(&'static str),
}

/// Words that start shell syntax rather than a program.
const KEYWORDS: &[&str] = &[
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "until", "while",
];

/// Split a command line into simple commands, or say why it is not one the prefix rule reads.
pub fn parse(command: &str) -> Shape {
    match Lexer::new(command).run() {
        Err(why) => Shape::Complex(why),
        Ok(parts) => {
            for part in &parts {
                let Some(first) = part.first() else { continue };
                if KEYWORDS.contains(&first.as_str()) {
                    return Shape::Complex("shell syntax");
                }
                if is_assignment(first) {
                    return Shape::Complex("a variable assignment");
                }
                if first.contains('$') {
                    return Shape::Complex("a program named by a variable");
                }
            }
            Shape::Plain(parts.into_iter().filter(|p| !p.is_empty()).collect())
        }
    }
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// A small shell lexer: words, quotes, escapes, separators; it refuses what it does not read.
struct Lexer {
    chars: Vec<char>,
    i: usize,
    parts: Vec<Vec<String>>,
    part: Vec<String>,
    word: String,
    /// The current word has started (`""` is a word).
    in_word: bool,
}

impl Lexer {
    fn new(command: &str) -> Self {
        Lexer {
            chars: command.chars().collect(),
            i: 0,
            parts: Vec::new(),
            part: Vec::new(),
            word: String::new(),
            in_word: false,
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn end_word(&mut self) {
        if self.in_word {
            self.part.push(std::mem::take(&mut self.word));
            self.in_word = false;
        }
    }

    fn end_part(&mut self) {
        self.end_word();
        self.parts.push(std::mem::take(&mut self.part));
    }

    fn run(mut self) -> Result<Vec<Vec<String>>, &'static str> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => {
                    self.end_word();
                    self.i += 1;
                }
                '\n' | ';' => {
                    if c == ';' && self.peek(1) == Some(';') {
                        return Err("shell syntax");
                    }
                    self.end_part();
                    self.i += 1;
                }
                '|' => {
                    self.end_part();
                    self.i += 1;
                    if matches!(self.peek(0), Some('|' | '&')) {
                        self.i += 1;
                    }
                }
                '&' => {
                    if self.peek(1) == Some('>') {
                        // `&> target`: stdout and stderr to a file.
                        self.end_word();
                        self.i += 2;
                        if self.peek(0) == Some('>') {
                            self.i += 1;
                        }
                        self.redirect_target()?;
                        continue;
                    }
                    self.end_part();
                    self.i += 1;
                    if self.peek(0) == Some('&') {
                        self.i += 1;
                    }
                }
                '>' | '<' => self.redirection()?,
                '(' | ')' => return Err("a subshell"),
                '`' => return Err("a command substitution"),
                '$' => self.dollar()?,
                '#' if !self.in_word => {
                    // A comment, to the end of the line.
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '\\' => {
                    self.i += 1;
                    match self.peek(0) {
                        Some('\n') => {}
                        Some(next) => {
                            self.word.push(next);
                            self.in_word = true;
                        }
                        None => {}
                    }
                    self.i += 1;
                }
                '\'' => {
                    self.in_word = true;
                    self.i += 1;
                    loop {
                        match self.peek(0) {
                            None => return Err("an unclosed quote"),
                            Some('\'') => break,
                            Some(ch) => self.word.push(ch),
                        }
                        self.i += 1;
                    }
                    self.i += 1;
                }
                '"' => self.double_quoted()?,
                other => {
                    self.word.push(other);
                    self.in_word = true;
                    self.i += 1;
                }
            }
        }
        self.end_part();
        Ok(self.parts)
    }

    /// `$`: a substitution is refused; `$'…'` is a quote; a variable stays in the word.
    fn dollar(&mut self) -> Result<(), &'static str> {
        match self.peek(1) {
            Some('(') => Err("a command substitution"),
            Some('\'') => {
                self.in_word = true;
                self.i += 2;
                loop {
                    match self.peek(0) {
                        None => return Err("an unclosed quote"),
                        Some('\\') => {
                            if let Some(n) = self.peek(1) {
                                self.word.push(n);
                            }
                            self.i += 2;
                            continue;
                        }
                        Some('\'') => break,
                        Some(ch) => self.word.push(ch),
                    }
                    self.i += 1;
                }
                self.i += 1;
                Ok(())
            }
            _ => {
                self.word.push('$');
                self.in_word = true;
                self.i += 1;
                Ok(())
            }
        }
    }

    fn double_quoted(&mut self) -> Result<(), &'static str> {
        self.in_word = true;
        self.i += 1;
        loop {
            match self.peek(0) {
                None => return Err("an unclosed quote"),
                Some('"') => break,
                Some('`') => return Err("a command substitution"),
                Some('$') if self.peek(1) == Some('(') => return Err("a command substitution"),
                Some('\\') => {
                    match self.peek(1) {
                        Some(n @ ('"' | '\\' | '$' | '`')) => self.word.push(n),
                        Some('\n') => {}
                        Some(n) => {
                            self.word.push('\\');
                            self.word.push(n);
                        }
                        None => return Err("an unclosed quote"),
                    }
                    self.i += 2;
                    continue;
                }
                Some(ch) => self.word.push(ch),
            }
            self.i += 1;
        }
        self.i += 1;
        Ok(())
    }

    /// `>`, `>>`, `<`, `N>&M`…: only duplications between descriptors and `/dev/null` as the
    /// target are harmless; anything else writes or reads a file, so no prefix covers it.
    fn redirection(&mut self) -> Result<(), &'static str> {
        // A word of digits right before is the descriptor (`2>`), not an argument.
        if self.in_word && !self.word.chars().all(|c| c.is_ascii_digit()) {
            return Err("a redirection");
        }
        self.word.clear();
        self.in_word = false;
        let op = self.peek(0);
        self.i += 1;
        match (op, self.peek(0)) {
            (_, Some('(')) => return Err("a process substitution"),
            (Some('<'), Some('<')) => return Err("a here-document"),
            (_, Some('&')) => {
                self.i += 1;
                let mut fd = String::new();
                while let Some(d) = self.peek(0).filter(|c| c.is_ascii_digit() || *c == '-') {
                    fd.push(d);
                    self.i += 1;
                }
                return if fd.is_empty() {
                    Err("a redirection")
                } else {
                    Ok(())
                };
            }
            (Some('>'), Some('>' | '|')) => self.i += 1,
            _ => {}
        }
        self.redirect_target()
    }

    fn redirect_target(&mut self) -> Result<(), &'static str> {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.i += 1;
        }
        let mut target = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || ";&|<>()".contains(c) {
                break;
            }
            target.push(c);
            self.i += 1;
        }
        if target == "/dev/null" {
            Ok(())
        } else {
            Err("a redirection")
        }
    }
}
