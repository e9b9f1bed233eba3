//! Plain-text tables for terminals and logs (`satcc.textgrid.grid`), laid out by comfy-table:
//! no borders, columns two spaces apart, no wrapping, widths in terminal cells.

use comfy_table::presets::NOTHING;
use comfy_table::{CellAlignment, ContentArrangement, Table};
use pyo3::prelude::*;

/// The header line and one line per row: each column as wide as its widest cell (a wide
/// character counts two), right-aligned unless its index is in `left`, separated by `gap`
/// spaces; trailing blanks dropped. Cells are text as they are: no markup, no colour.
#[pyfunction]
fn text_grid(
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    left: Vec<usize>,
    gap: u16,
) -> Vec<String> {
    let mut table = Table::new();
    table
        .load_style(NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(&columns)
        .add_rows(rows);
    let last = columns.len().saturating_sub(1);
    let half = gap / 2;
    for (i, column) in table.column_iter_mut().enumerate() {
        let before = if i == 0 { 0 } else { gap - half };
        let after = if i == last { 0 } else { half };
        column.set_padding((before, after));
        column.set_cell_alignment(if left.contains(&i) {
            CellAlignment::Left
        } else {
            CellAlignment::Right
        });
    }
    table
        .lines()
        .map(|line| line.trim_end().to_string())
        .collect()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(text_grid, m)?)?;
    Ok(())
}
