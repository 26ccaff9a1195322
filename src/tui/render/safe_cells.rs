//! The last step of every frame: each cell sent to the terminal is one that every terminal
//! draws in exactly the columns ratatui gave it. Terminals differ on some grapheme clusters: one
//! that does not join an emoji ZWJ sequence (a family) draws every person, six columns where
//! ratatui laid out two; one that ignores a variation selector draws `❤️` in one column where
//! ratatui laid out two; a flag's two letters may take a cell each, and the second is then never
//! cleared. Since later frames send only the cells that changed, such a glyph stays on screen.
//! So a cell is sent as it is only when one of its characters takes all its columns (the others
//! are marks drawn over it: accents, a variation selector on a wide emoji). Any other cluster
//! keeps its columns, but is sent as pieces that are safe each: without joiners, variation
//! selectors, skin tones and keycap marks, a flag as its two letters (`FR`), cut to the columns
//! (the family as its first person, `❤️` as `❤` and a blank). A wide character whose second
//! column another widget drew over (a popup's border across the chat), or that would run past
//! the row's end, becomes a blank: the terminal would draw it over the neighbour it cannot see.

use ratatui::buffer::{Buffer, CellDiffOption, CellWidth as _};

/// Make every cell of `buf` safe to send (see the module header).
pub(crate) fn make_safe(buf: &mut Buffer) {
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let mut x = area.left();
        while x < area.right() {
            x = x.saturating_add(fix_cell(buf, x, y, area.right()).max(1));
        }
    }
}

/// The columns one character takes on its own in ratatui's buffer.
fn char_cells(c: char) -> usize {
    let mut buf = [0u8; 4];
    usize::from(c.encode_utf8(&mut buf).cell_width())
}

/// True when every terminal draws the cluster `symbol` in one cell of `width` columns: exactly
/// one of its characters takes columns, all of them (the others are marks drawn over it).
fn one_cell(symbol: &str, width: usize) -> bool {
    let mut wide = symbol.chars().map(char_cells).filter(|w| *w > 0);
    wide.next() == Some(width) && wide.next().is_none()
}

/// What to send instead of the cluster `symbol` that ratatui laid out over `width` columns, as
/// one text a cell, or `None` when every terminal draws it as it is. Joiners, variation
/// selectors, skin tones and keycap marks go; a flag's letters are sent as letters (`FR`); the
/// rest is kept from the start while it fits.
fn pieces(symbol: &str, width: usize) -> Option<Vec<(String, usize)>> {
    if one_cell(symbol, width) {
        return None;
    }
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut used = 0;
    for c in symbol.chars() {
        let c = match u32::from(c) {
            // A regional indicator: the letter it stands for.
            n @ 0x1F1E6..=0x1F1FF => char::from_u32(n - 0x1F1E6 + u32::from('A')).unwrap_or(' '),
            0x200D | 0xFE0E | 0xFE0F | 0x1F3FB..=0x1F3FF | 0x20E3 | 0xE0020..=0xE007F => continue,
            _ => c,
        };
        match char_cells(c) {
            0 => {
                // A mark stays on the character it marks.
                if let Some((last, _)) = out.last_mut() {
                    last.push(c);
                }
            }
            w if used + w <= width => {
                out.push((c.to_string(), w));
                used += w;
            }
            _ => break,
        }
    }
    Some(out)
}

/// True when the columns after a `width`-wide cell at `x` hold nothing of their own and are on
/// the row.
fn covered(buf: &Buffer, x: u16, y: u16, width: u16, right: u16) -> bool {
    (1..width).all(|dx| {
        let at = x.saturating_add(dx);
        at < right && buf.cell((at, y)).is_some_and(|c| c.symbol() == " ")
    })
}

/// Make the cell at (`x`, `y`) safe; returns the columns it takes.
fn fix_cell(buf: &mut Buffer, x: u16, y: u16, right: u16) -> u16 {
    let Some(cell) = buf.cell((x, y)) else {
        return 1;
    };
    let symbol = cell.symbol();
    if symbol.len() == 1
        || matches!(
            cell.diff_option,
            CellDiffOption::Skip | CellDiffOption::ForcedWidth(_)
        )
    {
        return 1; // ASCII, or a cell drawn by other means
    }
    let width = cell.cell_width();
    if width > 1 && !covered(buf, x, y, width, right) {
        if let Some(cell) = buf.cell_mut((x, y)) {
            cell.set_symbol(" ");
        }
        return 1;
    }
    let Some(pieces) = pieces(symbol, usize::from(width)) else {
        return width;
    };
    let style = cell.style();
    // The pieces one after the other, each a cell (a wide one and the blank it covers), then
    // blanks in the same colours over the columns they leave.
    let mut put = |dx: usize, text: &str| {
        let at = u16::try_from(dx).map_or(u16::MAX, |d| x.saturating_add(d));
        if let Some(c) = buf.cell_mut((at, y)) {
            c.set_symbol(text).set_style(style);
        }
    };
    let mut at = 0;
    for (text, w) in pieces {
        put(at, &text);
        for dx in 1..w {
            put(at + dx, " ");
        }
        at += w;
    }
    for dx in at..usize::from(width) {
        put(dx, " ");
    }
    width
}

#[cfg(test)]
#[path = "safe_cells_tests.rs"]
pub(crate) mod tests;
