//! Earlier generations, in brief: the previous document's `Touched` section read back (as the
//! user left it) into paths by category, the last test or build, and notes.
//!
//! The reader is tolerant: it knows the lines [`super::render`] writes, and keeps any other
//! non-empty line (something the user typed) as a note, so an edit is carried, not lost.

use super::JOBS_HEADING;
use super::LineCounts;

/// Notes carried at most, and their length (characters).
const MAX_NOTES: usize = 10;
const NOTE_CHARS: usize = 200;

/// Heads the errors still open at a cut (written last by [`super::render`]); what follows it is
/// not carried.
pub(super) const OPEN_ERRORS_HEAD: &str = "Errors still open at the cut";

/// The categories a path is carried under, most telling first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Edited,
    Created,
    Deleted,
    Read,
}

impl Category {
    pub const ALL: [Category; 4] = [
        Category::Edited,
        Category::Created,
        Category::Deleted,
        Category::Read,
    ];

    pub fn word(self) -> &'static str {
        match self {
            Category::Edited => "edited",
            Category::Created => "created",
            Category::Deleted => "deleted",
            Category::Read => "read",
        }
    }
}

/// One carried path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub path: String,
    pub counts: Option<LineCounts>,
    /// `moved to \`b.rs\``.
    pub note: Option<String>,
}

/// The paths of one category, and how many more were only counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Group {
    pub items: Vec<Item>,
    pub more: usize,
}

/// What earlier generations left, in brief.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Earlier {
    /// The first and last generation carried.
    pub generations: Option<(u32, u32)>,
    pub edited: Group,
    pub created: Group,
    pub deleted: Group,
    pub read: Group,
    /// `generation 2: \`cargo test\` → exit 0`.
    pub check: Option<String>,
    /// Lines of the section the harness did not write (the user's), verbatim.
    pub notes: Vec<String>,
}

/// Which part of the section a line is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Head,
    Files,
    Commands,
    /// The background jobs at that handoff: live state, not carried.
    Jobs,
    Earlier,
    /// The errors open at the previous cut: not carried (they are stale now).
    OpenErrors,
}

impl Earlier {
    pub fn group(&self, c: Category) -> &Group {
        match c {
            Category::Edited => &self.edited,
            Category::Created => &self.created,
            Category::Deleted => &self.deleted,
            Category::Read => &self.read,
        }
    }

    fn group_mut(&mut self, c: Category) -> &mut Group {
        match c {
            Category::Edited => &mut self.edited,
            Category::Created => &mut self.created,
            Category::Deleted => &mut self.deleted,
            Category::Read => &mut self.read,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.generations.is_none()
            && self.check.is_none()
            && self.notes.is_empty()
            && Category::ALL
                .into_iter()
                .all(|c| self.group(c).items.is_empty() && self.group(c).more == 0)
    }

    /// What the previous document's section (`text`) carries into generation `current`'s.
    pub fn carried(text: &str, current: u32) -> Earlier {
        let mut out = Earlier::default();
        let mut part = Part::Head;
        let mut previous: Option<u32> = None;
        let mut earlier_range: Option<(u32, u32)> = None;
        let mut check: Option<String> = None;
        let mut carried_check: Option<String> = None;
        for raw in text.lines() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("From the tool log of generation ") {
                previous = leading_number(rest);
                part = Part::Head;
            } else if line.starts_with("Files this generation") {
                part = Part::Files;
            } else if line.starts_with("Commands this generation") {
                part = Part::Commands;
            } else if line.starts_with(JOBS_HEADING) {
                part = Part::Jobs;
            } else if let Some(rest) = line.strip_prefix("Last test or build:") {
                check = Some(rest.trim().to_string());
                part = Part::Head;
            } else if line.starts_with(OPEN_ERRORS_HEAD) {
                part = Part::OpenErrors;
            } else if let Some(rest) = line.strip_prefix("Earlier generation") {
                earlier_range = range(rest);
                part = Part::Earlier;
            } else if let Some(item) = line.strip_prefix("- ") {
                match part {
                    Part::Files => out.file_line(item),
                    Part::Commands | Part::Jobs => {}
                    Part::Earlier => {
                        if let Some(c) = out.earlier_line(item) {
                            carried_check = Some(c);
                        }
                    }
                    Part::Head => out.note(line),
                    Part::OpenErrors => {}
                }
            } else {
                out.note(line);
            }
        }
        let previous = previous.unwrap_or_else(|| current.saturating_sub(1).max(1));
        let first = earlier_range.map_or(previous, |(a, _)| a.min(previous));
        out.generations = Some((first, previous));
        out.check = match check {
            Some(c) if !c.is_empty() => Some(format!("generation {previous}: {c}")),
            _ => carried_check,
        };
        out.settle();
        out
    }

    /// A line of the previous generation's file list: `` `path`: edited +3 -1; read 1-20 ``.
    fn file_line(&mut self, item: &str) {
        let Some((path, rest)) = code_span(item) else {
            if let Some(n) = more_count(item) {
                self.group_mut(Category::Read).more += n;
            } else {
                self.note(&format!("- {item}"));
            }
            return;
        };
        let desc = rest.trim_start_matches(':').trim();
        let mut found = None;
        for part in desc.split(';').map(str::trim) {
            let (category, note) = if part.starts_with("created and deleted") {
                // Gone again: nothing to carry.
                return;
            } else if part.starts_with("edited") || part.starts_with("rewritten") {
                (Category::Edited, None)
            } else if part.starts_with("created") {
                (Category::Created, None)
            } else if part.starts_with("deleted") {
                (Category::Deleted, None)
            } else if part.starts_with("moved to") {
                (Category::Deleted, Some(part.to_string()))
            } else {
                continue;
            };
            found = Some((category, counts_in(part), note));
            break;
        }
        let (category, counts, note) = found.unwrap_or((Category::Read, None, None));
        self.add(category, Item { path, counts, note });
    }

    /// A line of the previous document's own earlier part. Returns its test-or-build line.
    fn earlier_line(&mut self, item: &str) -> Option<String> {
        if let Some(rest) = item.strip_prefix("last test or build, ") {
            return Some(rest.trim().to_string());
        }
        if let Some(rest) = item.strip_prefix("note: ") {
            self.note(rest);
            return None;
        }
        let category = Category::ALL.into_iter().find(|c| {
            item.strip_prefix(c.word())
                .is_some_and(|r| r.starts_with(':'))
        });
        let Some(category) = category else {
            self.note(&format!("- {item}"));
            return None;
        };
        let mut rest = item
            .get(category.word().len() + 1..)
            .unwrap_or_default()
            .trim();
        while !rest.is_empty() {
            match code_span(rest) {
                Some((path, after)) => {
                    let after = after.trim_start();
                    let (detail, after) = match after.strip_prefix('(') {
                        Some(inner) => match inner.find(')') {
                            Some(close) => (
                                inner.get(..close).unwrap_or_default(),
                                inner.get(close + 1..).unwrap_or_default(),
                            ),
                            None => (inner, ""),
                        },
                        None => ("", after),
                    };
                    let note = detail.starts_with("moved to").then(|| detail.to_string());
                    let counts = if note.is_some() {
                        None
                    } else {
                        counts_in(detail)
                    };
                    self.add(category, Item { path, counts, note });
                    rest = after.trim_start().trim_start_matches(',').trim_start();
                }
                None => {
                    if let Some(n) = more_count(rest) {
                        self.group_mut(category).more += n;
                    }
                    break;
                }
            }
        }
        None
    }

    fn note(&mut self, line: &str) {
        if self.notes.len() < MAX_NOTES {
            self.notes
                .push(crate::engine::text::one_line(line, NOTE_CHARS));
        }
    }

    /// Add a path to a category: counts of the same path add up; the latest note wins.
    pub fn add(&mut self, category: Category, item: Item) {
        let group = self.group_mut(category);
        match group.items.iter_mut().find(|i| i.path == item.path) {
            Some(known) => {
                known.counts = match (known.counts, item.counts) {
                    (Some(mut a), Some(b)) => {
                        a.add(b);
                        Some(a)
                    }
                    (a, b) => a.or(b),
                };
                if item.note.is_some() {
                    known.note = item.note;
                }
            }
            None => group.items.push(item),
        }
    }

    /// A path read that was also changed is listed as changed only; paths in path order.
    pub fn settle(&mut self) {
        let changed: Vec<String> = [Category::Edited, Category::Created, Category::Deleted]
            .into_iter()
            .flat_map(|c| self.group(c).items.iter().map(|i| i.path.clone()))
            .collect();
        self.group_mut(Category::Read)
            .items
            .retain(|i| !changed.contains(&i.path));
        for c in Category::ALL {
            self.group_mut(c).items.sort_by(|a, b| a.path.cmp(&b.path));
        }
    }
}

/// The number a text starts with.
fn leading_number(s: &str) -> Option<u32> {
    let digits: String = s.trim().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `s 1–3, in brief:` / `s 1-3` / ` 2, in brief:` → the generations.
fn range(s: &str) -> Option<(u32, u32)> {
    let s = s.trim_start_matches('s').trim();
    let a = leading_number(s)?;
    let after = s.trim_start_matches(|c: char| c.is_ascii_digit());
    let b = after
        .strip_prefix('–')
        .or_else(|| after.strip_prefix('-'))
        .and_then(leading_number)
        .unwrap_or(a);
    Some((a.min(b), a.max(b)))
}

/// `… and 12 more …` → 12.
fn more_count(s: &str) -> Option<usize> {
    let at = s.find("and ")?;
    let rest = s.get(at + 4..)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if !rest.get(digits.len()..)?.trim_start().starts_with("more") {
        return None;
    }
    digits.parse().ok()
}

/// `+12 -3` (also with `−`) anywhere in `s`.
fn counts_in(s: &str) -> Option<LineCounts> {
    let mut c = LineCounts::default();
    let mut any = false;
    for word in s.split(|ch: char| ch.is_whitespace() || ch == ',' || ch == '(' || ch == ')') {
        let (sign, digits) = match word.chars().next() {
            Some(s @ ('+' | '-' | '−')) => (s, word.get(s.len_utf8()..).unwrap_or_default()),
            _ => continue,
        };
        let Ok(n) = digits.parse::<u64>() else {
            continue;
        };
        any = true;
        if sign == '+' {
            c.added = c.added.saturating_add(n);
        } else {
            c.removed = c.removed.saturating_add(n);
        }
    }
    any.then_some(c)
}

/// The code span `s` starts with (one or two backticks) and what follows it.
pub(super) fn code_span(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    if let Some(inner) = s.strip_prefix("`` ") {
        let end = inner.find(" ``")?;
        return Some((
            inner.get(..end)?.to_string(),
            inner.get(end + 3..).unwrap_or_default(),
        ));
    }
    let inner = s.strip_prefix('`')?;
    let end = inner.find('`')?;
    Some((
        inner.get(..end)?.to_string(),
        inner.get(end + 1..).unwrap_or_default(),
    ))
}
