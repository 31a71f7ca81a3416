//! Writes a [`Table`] as a Parquet file with the `parquet` crate's low-level
//! column writer (no Arrow): each column gets the narrowest type that holds
//! all its cells (BOOLEAN, INT64, DOUBLE, else UTF-8 strings), nulls as
//! OPTIONAL definition levels, one row group, no compression.

use fabriclab::sweep::{Cell, Table};
use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::path::Path;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Bool,
    Int,
    Double,
    Text,
}

fn kind_of(cells: impl Iterator<Item = Cell>) -> Kind {
    let mut k: Option<Kind> = None;
    for c in cells {
        let this = match c {
            Cell::Null => continue,
            Cell::Bool(_) => Kind::Bool,
            Cell::Int(_) => Kind::Int,
            Cell::Float(_) => Kind::Double,
            Cell::Str(_) => Kind::Text,
        };
        k = Some(match (k, this) {
            (None, t) => t,
            (Some(a), b) if a == b => a,
            (Some(Kind::Int), Kind::Double) | (Some(Kind::Double), Kind::Int) => Kind::Double,
            _ => Kind::Text,
        });
    }
    k.unwrap_or(Kind::Text)
}

fn text(c: &Cell) -> String {
    match c {
        Cell::Str(s) => s.clone(),
        Cell::Bool(b) => b.to_string(),
        Cell::Int(i) => i.to_string(),
        Cell::Float(f) => f.to_string(),
        Cell::Null => String::new(),
    }
}

/// Writes `path` crash-safely (a temporary file renamed into place).
pub fn write(table: &Table, path: &Path) -> Result<(), String> {
    fabriclab::files::write_with(path, |f| write_inner(table, f).map_err(std::io::Error::other))
}

fn write_inner(table: &Table, file: &mut std::fs::File) -> Result<(), parquet::errors::ParquetError> {
    let col = |i: usize| table.rows.iter().map(move |r| r[i].clone());
    let kinds: Vec<Kind> = (0..table.columns.len()).map(|i| kind_of(col(i))).collect();
    let fields = table
        .columns
        .iter()
        .zip(&kinds)
        .map(|(name, k)| {
            let (physical, logical) = match k {
                Kind::Bool => (Physical::BOOLEAN, None),
                Kind::Int => (Physical::INT64, None),
                Kind::Double => (Physical::DOUBLE, None),
                Kind::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let schema = Arc::new(Type::group_type_builder("sweep").with_fields(fields).build()?);
    let props = Arc::new(WriterProperties::builder().set_created_by("fabriclab sweep".into()).build());
    let mut writer = SerializedFileWriter::new(file, schema, props)?;
    let mut rg = writer.next_row_group()?;
    for (i, k) in kinds.iter().enumerate() {
        let Some(mut cw) = rg.next_column()? else { break };
        let defs: Vec<i16> = col(i).map(|c| i16::from(c != Cell::Null)).collect();
        let present = || col(i).filter(|c| *c != Cell::Null);
        match k {
            Kind::Bool => {
                let v: Vec<bool> = present().map(|c| c == Cell::Bool(true)).collect();
                cw.typed::<BoolType>().write_batch(&v, Some(&defs), None)?;
            }
            Kind::Int => {
                let v: Vec<i64> = present().map(|c| if let Cell::Int(x) = c { x } else { 0 }).collect();
                cw.typed::<Int64Type>().write_batch(&v, Some(&defs), None)?;
            }
            Kind::Double => {
                let v: Vec<f64> = present().map(|c| c.as_f64().unwrap_or(f64::NAN)).collect();
                cw.typed::<DoubleType>().write_batch(&v, Some(&defs), None)?;
            }
            Kind::Text => {
                let v: Vec<ByteArray> = present().map(|c| ByteArray::from(text(&c).into_bytes())).collect();
                cw.typed::<ByteArrayType>().write_batch(&v, Some(&defs), None)?;
            }
        }
        cw.close()?;
    }
    rg.close()?;
    writer.close()?;
    Ok(())
}
