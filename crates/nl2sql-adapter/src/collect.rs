//! Building Arrow results from driver rows under the row and byte limits
//! (spec: adapters.md §3 "Limits", §5.3).

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::record_batch::RecordBatch;

use crate::types::{
    ExecutionStats, Limits, ResultError, ResultErrorCode, ResultFrame, TruncatedReason,
};

/// The Arrow type a result column maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnKind {
    /// Int64.
    Int64,
    /// Float64.
    Float64,
    /// Utf8.
    Utf8,
    /// Boolean.
    Boolean,
    /// Binary.
    Binary,
    /// Date32 (days since the epoch).
    Date32,
    /// Timestamp in microseconds, with the time zone when the engine type has one.
    TimestampMicros(Option<String>),
}

impl ColumnKind {
    fn data_type(&self) -> DataType {
        match self {
            ColumnKind::Int64 => DataType::Int64,
            ColumnKind::Float64 => DataType::Float64,
            ColumnKind::Utf8 => DataType::Utf8,
            ColumnKind::Boolean => DataType::Boolean,
            ColumnKind::Binary => DataType::Binary,
            ColumnKind::Date32 => DataType::Date32,
            ColumnKind::TimestampMicros(tz) => {
                DataType::Timestamp(TimeUnit::Microsecond, tz.as_deref().map(Arc::from))
            }
        }
    }

    fn fits(&self, cell: &Cell) -> bool {
        matches!(
            (self, cell),
            (_, Cell::Null)
                | (ColumnKind::Utf8, _)
                | (ColumnKind::Int64, Cell::Int(_))
                | (ColumnKind::Float64, Cell::Int(_) | Cell::Float(_))
                | (ColumnKind::Boolean, Cell::Bool(_))
                | (ColumnKind::Binary, Cell::Bytes(_))
                | (ColumnKind::Date32, Cell::Date(_))
                | (ColumnKind::TimestampMicros(_), Cell::TimestampMicros(_))
        )
    }
}

/// One value read from a driver.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Bytes(Vec<u8>),
    /// A boolean.
    Bool(bool),
    /// A date, in days since 1970-01-01.
    Date(i32),
    /// A timestamp, in microseconds since the epoch.
    TimestampMicros(i64),
}

impl Cell {
    /// Approximate Arrow size of the value: its data plus an offset or validity share.
    fn size(&self) -> u64 {
        match self {
            Cell::Null | Cell::Bool(_) => 1,
            Cell::Int(_) | Cell::Float(_) | Cell::TimestampMicros(_) => 8,
            Cell::Date(_) => 4,
            Cell::Text(s) => s.len() as u64 + 4,
            Cell::Bytes(b) => b.len() as u64 + 4,
        }
    }

    fn to_text(&self) -> Option<String> {
        match self {
            Cell::Null => None,
            Cell::Int(i) => Some(i.to_string()),
            Cell::Float(f) => Some(f.to_string()),
            Cell::Text(s) => Some(s.clone()),
            Cell::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Cell::Bool(b) => Some(b.to_string()),
            Cell::Date(d) => Some(d.to_string()),
            Cell::TimestampMicros(t) => Some(t.to_string()),
        }
    }
}

/// What [`ResultBuilder::push_row`] tells the driver loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Push {
    /// Keep reading.
    Continue,
    /// A limit was reached: stop reading and cancel the cursor.
    Stop,
}

/// Collects driver rows into one Arrow batch, stopping at the row and byte limits.
/// The driver reads at most one row past the row limit to learn whether more exist.
#[derive(Debug)]
pub struct ResultBuilder {
    names: Vec<String>,
    kinds: Vec<ColumnKind>,
    rows: Vec<Vec<Cell>>,
    limits: Limits,
    bytes: u64,
    truncated: Option<TruncatedReason>,
}

impl ResultBuilder {
    /// A builder for columns `names` with the types `kinds` from the engine's metadata.
    pub fn new(names: Vec<String>, kinds: Vec<ColumnKind>, limits: Limits) -> Self {
        ResultBuilder {
            names,
            kinds,
            rows: Vec::new(),
            limits,
            bytes: 0,
            truncated: None,
        }
    }

    /// Adds a row unless a limit is reached.
    pub fn push_row(&mut self, row: Vec<Cell>) -> Push {
        if self.rows.len() as u64 >= self.limits.row_limit {
            self.truncated = Some(TruncatedReason::RowLimit);
            return Push::Stop;
        }
        let size: u64 = row.iter().map(Cell::size).sum();
        if self.bytes + size > self.limits.max_bytes {
            self.truncated = Some(TruncatedReason::MaxBytes);
            return Push::Stop;
        }
        self.bytes += size;
        self.rows.push(row);
        Push::Continue
    }

    /// Stops at the byte limit without the row: the engine reported a value larger than
    /// the limit instead of sending it.
    pub fn stop_at_max_bytes(&mut self) -> Push {
        self.truncated = Some(TruncatedReason::MaxBytes);
        Push::Stop
    }

    /// Whether a limit was reached.
    pub fn is_truncated(&self) -> bool {
        self.truncated.is_some()
    }

    /// The successful frame. A column holding a value that does not fit its type
    /// becomes Utf8.
    pub fn finish(self, datasource_id: &str, execution_time_ms: f64) -> ResultFrame {
        let n_cols = self.names.len();
        let mut fields = Vec::with_capacity(n_cols);
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(n_cols);
        for (i, name) in self.names.iter().enumerate() {
            let declared = self.kinds.get(i).cloned().unwrap_or(ColumnKind::Utf8);
            let kind = if self
                .rows
                .iter()
                .all(|r| r.get(i).is_none_or(|c| declared.fits(c)))
            {
                declared
            } else {
                ColumnKind::Utf8
            };
            let cells = self.rows.iter().map(|r| r.get(i).unwrap_or(&Cell::Null));
            arrays.push(build_array(&kind, cells));
            fields.push(Field::new(name, kind.data_type(), true));
        }
        let schema = Arc::new(Schema::new(fields));
        let row_count = self.rows.len() as u64;
        let batch = if n_cols == 0 {
            RecordBatch::try_new_with_options(
                schema.clone(),
                arrays,
                &arrow::record_batch::RecordBatchOptions::new()
                    .with_row_count(Some(self.rows.len())),
            )
        } else {
            RecordBatch::try_new(schema.clone(), arrays)
        };
        let batch = match batch {
            Ok(b) => b,
            Err(e) => {
                let err = ResultError::from_engine(ResultErrorCode::ExecutorCrash, &e.to_string())
                    .at("execute", datasource_id);
                return ResultFrame::failed(err, execution_time_ms);
            }
        };
        let bytes = batch.get_array_memory_size() as u64;
        ResultFrame {
            success: true,
            schema: Some(schema),
            batches: vec![batch],
            row_count,
            truncated: self.truncated.is_some(),
            bytes: Some(bytes),
            datasource_id: Some(datasource_id.to_owned()),
            tenant_id: None,
            execution_stats: ExecutionStats {
                execution_time_ms,
                truncated_reason: self.truncated,
            },
            error: None,
        }
    }
}

fn build_array<'a>(kind: &ColumnKind, cells: impl Iterator<Item = &'a Cell>) -> ArrayRef {
    match kind {
        ColumnKind::Int64 => {
            let mut b = Int64Builder::new();
            for c in cells {
                b.append_option(match c {
                    Cell::Int(i) => Some(*i),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        ColumnKind::Float64 => {
            let mut b = Float64Builder::new();
            for c in cells {
                b.append_option(match c {
                    Cell::Float(f) => Some(*f),
                    Cell::Int(i) => Some(*i as f64),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        ColumnKind::Boolean => {
            let mut b = BooleanBuilder::new();
            for c in cells {
                b.append_option(match c {
                    Cell::Bool(v) => Some(*v),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        ColumnKind::Binary => {
            let mut b = BinaryBuilder::new();
            for c in cells {
                match c {
                    Cell::Bytes(v) => b.append_value(v),
                    _ => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        ColumnKind::Date32 => {
            let mut b = Date32Builder::new();
            for c in cells {
                b.append_option(match c {
                    Cell::Date(d) => Some(*d),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        ColumnKind::TimestampMicros(tz) => {
            let mut b = TimestampMicrosecondBuilder::new();
            for c in cells {
                b.append_option(match c {
                    Cell::TimestampMicros(t) => Some(*t),
                    _ => None,
                });
            }
            Arc::new(b.finish().with_timezone_opt(tz.clone()))
        }
        ColumnKind::Utf8 => {
            let mut b = StringBuilder::new();
            for c in cells {
                b.append_option(c.to_text());
            }
            Arc::new(b.finish())
        }
    }
}
