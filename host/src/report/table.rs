//! A minimal elastic-tabstop table: left-aligned cells, two spaces between columns.

use std::borrow::Cow;

/// Render rows as columns padded to the widest cell plus two spaces (the last column unpadded).
pub fn render(rows: &[Vec<String>]) -> String {
    render_each(rows.len(), |i| Cow::Borrowed(&rows[i][..]))
}

/// [`render`] of the `count` rows `row` makes, each made twice (once for the columns' widths,
/// once for the text) rather than all held at once: a suite's table has a row per case.
pub(crate) fn render_each<'a>(count: usize, row: impl Fn(usize) -> Cow<'a, [String]>) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for i in 0..count {
        let row = row(i);
        if widths.len() < row.len() {
            widths.resize(row.len(), 0);
        }
        for (width, cell) in widths.iter_mut().zip(row.iter()) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for i in 0..count {
        let row = row(i);
        let start = out.len();
        for (i, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i] + 2 - cell.chars().count();
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        let end = out[start..].trim_end().len();
        out.truncate(start + end);
        out.push('\n');
    }
    out
}
