//! satcc's one Parquet writer: a result table given as Python lists (one per column, in schema
//! order) written as one Parquet file, so that writing a run's results needs no pyarrow (whose
//! import alone costs more than a 60 s simulation). The schema is `satcc.tables.Schema`'s:
//! each column is OPTIONAL with one of four types; floats that are NaN are stored as null, as
//! Arrow's `from_pandas` conversion did before.
//!
//! Options are fixed so that the bytes depend only on the data: one row group per
//! `ROW_GROUP_ROWS` rows, zstd level 3, dictionary encoding, chunk statistics, data pages v1.
//! The file is built in memory and written with one `write` call, so an I/O failure (a full
//! disk, a refused name) reaches Python as the `OSError` it is, and the sha256 a result's
//! summary records of the file is taken of those bytes (no second read).
//!
//! Its tests are tests/test_tables.py's, through the module the wheel ships: values and nulls
//! read back by pyarrow, the same table giving the same bytes, an empty table keeping its columns.

use std::path::PathBuf;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::types::Type;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Rows per row group: pyarrow's default (1 Mi rows), so a reader sees the same layout.
const ROW_GROUP_ROWS: usize = 1 << 20;
/// zstd level: the level results were always written with (fast, and small for series).
const ZSTD_LEVEL: i32 = 3;

/// One column's values, nulls as `None`.
enum Column {
    Int64(Vec<Option<i64>>),
    Float64(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
    Bool(Vec<Option<bool>>),
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::Int64(v) => v.len(),
            Column::Float64(v) => v.len(),
            Column::Text(v) => v.len(),
            Column::Bool(v) => v.len(),
        }
    }
}

fn physical(kind: &str) -> Option<(PhysicalType, Option<LogicalType>)> {
    Some(match kind {
        "int64" => (PhysicalType::INT64, None),
        "float64" => (PhysicalType::DOUBLE, None),
        "string" => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
        "bool" => (PhysicalType::BOOLEAN, None),
        _ => return None,
    })
}

/// The values of `list` as a column of `kind`; errors name the column, the row and the value.
fn extract(name: &str, kind: &str, list: &Bound<'_, PyList>) -> PyResult<Column> {
    fn each<T>(
        name: &str,
        kind: &str,
        list: &Bound<'_, PyList>,
        get: impl Fn(&Bound<'_, PyAny>) -> PyResult<Option<T>>,
    ) -> PyResult<Vec<Option<T>>> {
        let mut out = Vec::with_capacity(list.len());
        for (row, value) in list.iter().enumerate() {
            if value.is_none() {
                out.push(None);
                continue;
            }
            out.push(get(&value).map_err(|_| {
                let found = value
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "?".into());
                PyTypeError::new_err(format!(
                    "column {name}, row {row}: expected {kind} or None, found {found}"
                ))
            })?);
        }
        Ok(out)
    }
    Ok(match kind {
        "int64" => Column::Int64(each(name, kind, list, |v| v.extract::<i64>().map(Some))?),
        "float64" => Column::Float64(each(name, kind, list, |v| {
            let x = v.extract::<f64>()?;
            Ok((!x.is_nan()).then_some(x)) // NaN is a missing value (no RTT sample yet)
        })?),
        "string" => Column::Text(each(name, kind, list, |v| v.extract::<String>().map(Some))?),
        "bool" => Column::Bool(each(name, kind, list, |v| v.extract::<bool>().map(Some))?),
        _ => {
            return Err(PyValueError::new_err(format!(
                "column {name}: unknown type {kind:?} (int64, float64, string, bool)"
            )))
        }
    })
}

/// Definition levels (1 = a value, 0 = null) and the values present.
fn split<T: Clone>(values: &[Option<T>]) -> (Vec<i16>, Vec<T>) {
    let levels = values.iter().map(|v| i16::from(v.is_some())).collect();
    let present = values.iter().flatten().cloned().collect();
    (levels, present)
}

/// The values of `rows` with their definition levels, written by a typed column writer.
fn write_typed<T: DataType>(
    writer: &mut SerializedColumnWriter<'_>,
    values: &[Option<T::T>],
) -> Result<(), ParquetError>
where
    T::T: Clone,
{
    let (levels, present) = split(values);
    writer
        .typed::<T>()
        .write_batch(&present, Some(&levels), None)
        .map(|_| ())
}

fn write_column(
    mut writer: SerializedColumnWriter<'_>,
    column: &Column,
    rows: std::ops::Range<usize>,
) -> Result<(), ParquetError> {
    match column {
        Column::Int64(v) => write_typed::<Int64Type>(&mut writer, &v[rows])?,
        Column::Float64(v) => write_typed::<DoubleType>(&mut writer, &v[rows])?,
        Column::Bool(v) => write_typed::<BoolType>(&mut writer, &v[rows])?,
        Column::Text(v) => {
            let bytes: Vec<Option<ByteArray>> = v[rows]
                .iter()
                .map(|s| s.as_ref().map(|s| ByteArray::from(s.as_bytes().to_vec())))
                .collect();
            write_typed::<ByteArrayType>(&mut writer, &bytes)?
        }
    }
    writer.close()
}

/// The Parquet file's bytes for `columns` under `fields`, with `metadata` as key/value pairs.
fn encode(
    fields: &[(String, String)],
    columns: &[Column],
    metadata: Vec<(String, String)>,
) -> Result<Vec<u8>, ParquetError> {
    let mut types = Vec::with_capacity(fields.len());
    for (name, kind) in fields {
        let (phys, logical) = physical(kind).expect("checked by extract");
        types.push(Arc::new(
            Type::primitive_type_builder(name, phys)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()?,
        ));
    }
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(types)
            .build()?,
    );
    let kv = (!metadata.is_empty()).then(|| {
        metadata
            .into_iter()
            .map(|(k, v)| KeyValue::new(k, v))
            .collect()
    });
    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?))
        .set_dictionary_enabled(true)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_key_value_metadata(kv)
        .build();
    let mut writer = SerializedFileWriter::new(Vec::new(), schema, Arc::new(props))?;
    let rows = columns.first().map_or(0, Column::len);
    let mut start = 0;
    // one row group even for an empty table, as pyarrow writes one
    loop {
        let end = (start + ROW_GROUP_ROWS).min(rows);
        let mut group = writer.next_row_group()?;
        for column in columns {
            let w = group.next_column()?.expect("one writer per schema field");
            write_column(w, column, start..end)?;
        }
        group.close()?;
        start = end;
        if start >= rows {
            break;
        }
    }
    writer.into_inner()
}

/// Write `columns` (lists of Python values, one per field of `fields`: (name, type) with type
/// int64, float64, string or bool) to the Parquet file `path`, with `metadata` as the file's
/// key/value metadata; returns the sha256 (hex) of the bytes written, the file's. Raises
/// TypeError for a value of the wrong type (naming column and row), ValueError for columns of
/// different lengths, OSError when the file cannot be written.
#[pyfunction]
#[pyo3(signature = (path, fields, columns, metadata = None))]
pub fn write_parquet(
    py: Python<'_>,
    path: PathBuf,
    fields: Vec<(String, String)>,
    columns: Vec<Bound<'_, PyList>>,
    metadata: Option<Vec<(String, String)>>,
) -> PyResult<String> {
    if fields.len() != columns.len() {
        return Err(PyValueError::new_err(format!(
            "{} fields but {} columns",
            fields.len(),
            columns.len()
        )));
    }
    let mut data = Vec::with_capacity(columns.len());
    for ((name, kind), list) in fields.iter().zip(&columns) {
        data.push(extract(name, kind, list)?);
    }
    if let Some(first) = data.first() {
        if let Some(((name, _), c)) = fields
            .iter()
            .zip(&data)
            .find(|(_, c)| c.len() != first.len())
        {
            return Err(PyValueError::new_err(format!(
                "column {name} has {} rows, column {} has {}",
                c.len(),
                fields[0].0,
                first.len()
            )));
        }
    }
    let metadata = metadata.unwrap_or_default();
    let bytes = py
        .allow_threads(|| encode(&fields, &data, metadata))
        .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
    py.allow_threads(|| {
        std::fs::write(&path, &bytes)?;
        Ok::<_, std::io::Error>(crate::digest::sha256_hex(&bytes))
    })
    .map_err(PyErr::from)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_parquet, m)?)
}
