//! MySQL binary-protocol values to Arrow cells: integer types (and `YEAR`, `BIT`) as
//! Int64, floats and decimals as Float64, `DATE` as Date32, `DATETIME`/`TIMESTAMP` as
//! microsecond timestamps, `TIME` as text, strings as Utf8 and binary strings as Binary.

use mysql_async::Value;
use mysql_async::consts::{ColumnFlags, ColumnType};
use nl2sql_adapter::{Cell, ColumnKind};

/// The `binary` character set: the column holds bytes, not text.
const BINARY_CHARSET: u16 = 63;

/// The Arrow kind of a result column.
pub(crate) fn kind_of(column: &mysql_async::Column) -> ColumnKind {
    use ColumnType as T;
    match column.column_type() {
        T::MYSQL_TYPE_TINY
        | T::MYSQL_TYPE_SHORT
        | T::MYSQL_TYPE_INT24
        | T::MYSQL_TYPE_LONG
        | T::MYSQL_TYPE_LONGLONG
        | T::MYSQL_TYPE_YEAR
        | T::MYSQL_TYPE_BIT => ColumnKind::Int64,
        T::MYSQL_TYPE_FLOAT
        | T::MYSQL_TYPE_DOUBLE
        | T::MYSQL_TYPE_DECIMAL
        | T::MYSQL_TYPE_NEWDECIMAL => ColumnKind::Float64,
        T::MYSQL_TYPE_DATE | T::MYSQL_TYPE_NEWDATE => ColumnKind::Date32,
        T::MYSQL_TYPE_DATETIME
        | T::MYSQL_TYPE_DATETIME2
        | T::MYSQL_TYPE_TIMESTAMP
        | T::MYSQL_TYPE_TIMESTAMP2 => ColumnKind::TimestampMicros(None),
        T::MYSQL_TYPE_TINY_BLOB
        | T::MYSQL_TYPE_MEDIUM_BLOB
        | T::MYSQL_TYPE_LONG_BLOB
        | T::MYSQL_TYPE_BLOB
        | T::MYSQL_TYPE_VAR_STRING
        | T::MYSQL_TYPE_STRING
        | T::MYSQL_TYPE_VARCHAR
        | T::MYSQL_TYPE_GEOMETRY
            if column.character_set() == BINARY_CHARSET
                && !column.flags().contains(ColumnFlags::ENUM_FLAG)
                && !column.flags().contains(ColumnFlags::SET_FLAG) =>
        {
            ColumnKind::Binary
        }
        _ => ColumnKind::Utf8,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn time_text(neg: bool, days: u32, h: u8, m: u8, s: u8, us: u32) -> String {
    let hours = u64::from(days) * 24 + u64::from(h);
    let sign = if neg { "-" } else { "" };
    if us == 0 {
        format!("{sign}{hours:02}:{m:02}:{s:02}")
    } else {
        format!("{sign}{hours:02}:{m:02}:{s:02}.{us:06}")
    }
}

/// One value as a cell of `kind`.
pub(crate) fn cell_of(value: Option<Value>, kind: &ColumnKind) -> Cell {
    let Some(value) = value else {
        return Cell::Null;
    };
    match (value, kind) {
        (Value::NULL, _) => Cell::Null,
        (Value::Int(i), _) => Cell::Int(i),
        (Value::UInt(u), _) => i64::try_from(u).map_or_else(|_| Cell::Float(u as f64), Cell::Int),
        (Value::Float(f), _) => Cell::Float(f64::from(f)),
        (Value::Double(f), _) => Cell::Float(f),
        (Value::Date(y, mo, d, ..), ColumnKind::Date32) => {
            if mo == 0 || d == 0 {
                // MySQL's zero date
                Cell::Null
            } else {
                let days = days_from_civil(i64::from(y), u32::from(mo), u32::from(d));
                i32::try_from(days).map_or(Cell::Null, Cell::Date)
            }
        }
        (Value::Date(y, mo, d, h, mi, s, us), _) => {
            if mo == 0 || d == 0 {
                Cell::Null
            } else {
                let days = days_from_civil(i64::from(y), u32::from(mo), u32::from(d));
                let secs = days * 86_400 + i64::from(h) * 3_600 + i64::from(mi) * 60 + i64::from(s);
                Cell::TimestampMicros(secs * 1_000_000 + i64::from(us))
            }
        }
        (Value::Time(neg, days, h, m, s, us), _) => Cell::Text(time_text(neg, days, h, m, s, us)),
        (Value::Bytes(b), ColumnKind::Binary) => Cell::Bytes(b),
        (Value::Bytes(b), ColumnKind::Float64) => {
            let text = String::from_utf8_lossy(&b);
            text.trim()
                .parse::<f64>()
                .map_or_else(|_| Cell::Text(text.into_owned()), Cell::Float)
        }
        (Value::Bytes(b), ColumnKind::Int64) => {
            // BIT(n) arrives as big-endian bytes.
            if b.len() <= 8 {
                Cell::Int(b.iter().fold(0i64, |acc, x| (acc << 8) | i64::from(*x)))
            } else {
                Cell::Bytes(b)
            }
        }
        (Value::Bytes(b), _) => match String::from_utf8(b) {
            Ok(s) => Cell::Text(s),
            Err(e) => Cell::Bytes(e.into_bytes()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_count_days_from_the_epoch() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 1, 1), 10_957);
        assert_eq!(days_from_civil(2024, 2, 29), 19_782);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }

    #[test]
    fn values_become_cells_of_their_column_kind() {
        let ts = cell_of(
            Some(Value::Date(2024, 4, 10, 8, 0, 0, 0)),
            &ColumnKind::TimestampMicros(None),
        );
        assert_eq!(ts, Cell::TimestampMicros(1_712_736_000_000_000));
        assert_eq!(
            cell_of(
                Some(Value::Date(2024, 2, 29, 0, 0, 0, 0)),
                &ColumnKind::Date32
            ),
            Cell::Date(19_782)
        );
        assert_eq!(
            cell_of(Some(Value::Bytes(b"12.50".to_vec())), &ColumnKind::Float64),
            Cell::Float(12.5)
        );
        assert_eq!(
            cell_of(Some(Value::Time(false, 1, 2, 3, 4, 0)), &ColumnKind::Utf8),
            Cell::Text("26:03:04".to_owned())
        );
        assert_eq!(
            cell_of(Some(Value::Bytes(vec![1, 0])), &ColumnKind::Int64),
            Cell::Int(256)
        );
        assert_eq!(
            cell_of(Some(Value::UInt(u64::MAX)), &ColumnKind::Int64),
            Cell::Float(u64::MAX as f64)
        );
        assert_eq!(cell_of(None, &ColumnKind::Utf8), Cell::Null);
    }
}
