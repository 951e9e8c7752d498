//! A minimal elastic-tabstop table: left-aligned cells, two spaces between columns.

use std::borrow::Cow;
use std::io::Write;

/// Render rows as columns padded to the widest cell plus two spaces (the last column unpadded).
pub fn render(rows: &[Vec<String>]) -> String {
    let mut out = Vec::new();
    // Writing to memory does not fail, and the rows are there.
    let _ = write_each(
        || rows.iter().map(|row| Ok(Cow::Borrowed(&row[..]))),
        &mut out,
    );
    String::from_utf8(out).unwrap_or_default()
}

/// [`render`] of the rows `rows` makes, written to `out`: `rows` is called twice (once for
/// the columns' widths, once for the text), so the rows are not all held at once (a suite's
/// table has a row per case).
pub(crate) fn write_each<'a, I>(rows: impl Fn() -> I, out: &mut dyn Write) -> std::io::Result<()>
where
    I: Iterator<Item = std::io::Result<Cow<'a, [String]>>>,
{
    let mut widths: Vec<usize> = Vec::new();
    for row in rows() {
        let row = row?;
        if widths.len() < row.len() {
            widths.resize(row.len(), 0);
        }
        for (width, cell) in widths.iter_mut().zip(row.iter()) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut line = String::new();
    for row in rows() {
        let row = row?;
        line.clear();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i] + 2 - cell.chars().count();
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}
