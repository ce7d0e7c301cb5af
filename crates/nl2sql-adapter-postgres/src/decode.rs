//! PostgreSQL binary wire values to Arrow cells, without extra type crates: integers,
//! floats, `numeric` (as Float64), text-like types, `json`/`jsonb`, `uuid`, `bytea`,
//! `date`, `time`, `timestamp` and `timestamptz`. Other types are refused up front with
//! a message that says which column and how to fix the query (cast it to text).

use std::error::Error;

use nl2sql_adapter::{Cell, ColumnKind, ResultError, ResultErrorCode};
use tokio_postgres::types::{FromSql, Kind, Type};

/// Days from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

type BoxError = Box<dyn Error + Sync + Send>;

/// The type a column is read as, after unwrapping domains.
fn base(ty: &Type) -> &Type {
    match ty.kind() {
        Kind::Domain(inner) => base(inner),
        _ => ty,
    }
}

fn is_text_like(ty: &Type) -> bool {
    matches!(ty.kind(), Kind::Enum(_))
        || [
            Type::TEXT,
            Type::VARCHAR,
            Type::BPCHAR,
            Type::NAME,
            Type::UNKNOWN,
            Type::JSON,
            Type::XML,
        ]
        .contains(ty)
}

/// Whether values of `ty` can be of any size (text, JSON, XML, bytea): the types whose
/// size the adapter checks on the server before a value is sent.
pub(crate) fn is_variable_length(ty: &Type) -> bool {
    let ty = base(ty);
    is_text_like(ty) || *ty == Type::JSONB || *ty == Type::BYTEA
}

/// The SQL for the size in bytes of the value of `expr` (of type `ty`) as the server
/// sends it: its length uncompressed. (`pg_column_size` would say how much it takes
/// where it is stored, compressed: a 50 MB text of one repeated letter kept in a table
/// is 0.6 MB there.) `octet_length` of text and bytea reads the uncompressed length from
/// the value's header, without decompressing it; other types are measured as text, the
/// form JSON and XML are sent in.
pub(crate) fn size_sent(expr: &str, ty: &Type) -> String {
    match *base(ty) {
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::BYTEA => format!("octet_length({expr})"),
        _ => format!("octet_length(({expr})::text)"),
    }
}

/// The Arrow kind of a result column, or an error naming the column when the type
/// cannot be read.
pub(crate) fn kind_of(column: &str, ty: &Type) -> Result<ColumnKind, ResultError> {
    let ty = base(ty);
    let kind = match *ty {
        Type::BOOL => ColumnKind::Boolean,
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID | Type::CHAR => ColumnKind::Int64,
        Type::FLOAT4 | Type::FLOAT8 | Type::NUMERIC => ColumnKind::Float64,
        Type::BYTEA => ColumnKind::Binary,
        Type::DATE => ColumnKind::Date32,
        Type::TIMESTAMP => ColumnKind::TimestampMicros(None),
        Type::TIMESTAMPTZ => ColumnKind::TimestampMicros(Some("UTC".to_owned())),
        Type::TIME | Type::UUID | Type::JSONB | Type::VOID => ColumnKind::Utf8,
        _ if is_text_like(ty) => ColumnKind::Utf8,
        _ => {
            return Err(ResultError::new(
                ResultErrorCode::ExecutionFailed,
                format!(
                    "column '{column}' has PostgreSQL type {}, which nl2sql cannot read; cast it to text",
                    ty.name()
                ),
            ));
        }
    };
    Ok(kind)
}

/// One decoded value.
#[derive(Debug)]
pub(crate) struct Value(pub(crate) Cell);

fn be<const N: usize>(raw: &[u8]) -> Result<[u8; N], BoxError> {
    raw.try_into()
        .map_err(|_| format!("expected {N} bytes, got {}", raw.len()).into())
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let ty = base(ty);
        let cell = match *ty {
            Type::BOOL => Cell::Bool(raw.first().is_some_and(|b| *b != 0)),
            Type::CHAR => Cell::Int(i64::from(i8::from_be_bytes(be(raw)?))),
            Type::INT2 => Cell::Int(i64::from(i16::from_be_bytes(be(raw)?))),
            Type::INT4 => Cell::Int(i64::from(i32::from_be_bytes(be(raw)?))),
            Type::OID => Cell::Int(i64::from(u32::from_be_bytes(be(raw)?))),
            Type::INT8 => Cell::Int(i64::from_be_bytes(be(raw)?)),
            Type::FLOAT4 => Cell::Float(f64::from(f32::from_be_bytes(be(raw)?))),
            Type::FLOAT8 => Cell::Float(f64::from_be_bytes(be(raw)?)),
            Type::NUMERIC => numeric(raw)?,
            Type::BYTEA => Cell::Bytes(raw.to_vec()),
            Type::DATE => match i32::from_be_bytes(be(raw)?) {
                // ±infinity
                i32::MAX | i32::MIN => Cell::Null,
                d => Cell::Date(d.saturating_add(PG_EPOCH_DAYS)),
            },
            Type::TIMESTAMP | Type::TIMESTAMPTZ => match i64::from_be_bytes(be(raw)?) {
                i64::MAX | i64::MIN => Cell::Null,
                t => Cell::TimestampMicros(t.saturating_add(PG_EPOCH_MICROS)),
            },
            Type::TIME => Cell::Text(time_of_day(i64::from_be_bytes(be(raw)?))),
            Type::UUID => Cell::Text(uuid(raw)?),
            Type::JSONB => Cell::Text(text(raw.get(1..).unwrap_or_default())?),
            Type::VOID => Cell::Null,
            _ => Cell::Text(text(raw)?),
        };
        Ok(Value(cell))
    }

    fn from_sql_null(_ty: &Type) -> Result<Self, BoxError> {
        Ok(Value(Cell::Null))
    }

    fn accepts(_ty: &Type) -> bool {
        // Columns were checked by `kind_of` before any row was read.
        true
    }
}

fn text(raw: &[u8]) -> Result<String, BoxError> {
    Ok(std::str::from_utf8(raw)?.to_owned())
}

/// `HH:MM:SS` with microseconds when they are not zero.
pub(crate) fn time_of_day(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    if frac == 0 {
        format!("{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}.{frac:06}")
    }
}

fn uuid(raw: &[u8]) -> Result<String, BoxError> {
    let b: [u8; 16] = be(raw)?;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

/// Decodes the binary `numeric` format (base-10000 digits with a weight) through its
/// decimal text, so that the float is the correctly rounded value.
pub(crate) fn numeric(raw: &[u8]) -> Result<Cell, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        let b = raw
            .get(i * 2..i * 2 + 2)
            .ok_or_else(|| BoxError::from("numeric value too short"))?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    };
    let ndigits = usize::from(word(0)?);
    let weight = i32::from(word(1)? as i16);
    let sign = word(2)?;
    match sign {
        0x0000 | 0x4000 => {}
        0xC000 => return Ok(Cell::Float(f64::NAN)),
        0xD000 => return Ok(Cell::Float(f64::INFINITY)),
        0xF000 => return Ok(Cell::Float(f64::NEG_INFINITY)),
        other => return Err(format!("bad numeric sign {other:#x}").into()),
    }
    if ndigits == 0 {
        return Ok(Cell::Float(0.0));
    }
    let mut s = String::with_capacity(ndigits * 4 + 8);
    if sign == 0x4000 {
        s.push('-');
    }
    for i in 0..ndigits {
        s.push_str(&format!("{:04}", word(4 + i)?));
    }
    // The digits are d0 d1 … with d0 worth 10000^weight.
    let exponent = (weight - ndigits as i32 + 1) * 4;
    s.push_str(&format!("e{exponent}"));
    Ok(Cell::Float(s.parse::<f64>()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_bytes(digits: &[u16], weight: i16, sign: u16) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&(digits.len() as u16).to_be_bytes());
        v.extend_from_slice(&weight.to_be_bytes());
        v.extend_from_slice(&sign.to_be_bytes());
        v.extend_from_slice(&0u16.to_be_bytes());
        for d in digits {
            v.extend_from_slice(&d.to_be_bytes());
        }
        v
    }

    #[test]
    fn numeric_decodes_integers_fractions_and_signs() {
        // 12345.678 = 1|2345|6780 with weight 1
        let c = numeric(&numeric_bytes(&[1, 2345, 6780], 1, 0)).unwrap();
        assert_eq!(c, Cell::Float(12345.678));
        // -0.05 = 500 with weight -1
        let c = numeric(&numeric_bytes(&[500], -1, 0x4000)).unwrap();
        assert_eq!(c, Cell::Float(-0.05));
        // 1e8 = 1 with weight 2
        let c = numeric(&numeric_bytes(&[1], 2, 0)).unwrap();
        assert_eq!(c, Cell::Float(100_000_000.0));
        assert_eq!(
            numeric(&numeric_bytes(&[], 0, 0)).unwrap(),
            Cell::Float(0.0)
        );
        assert!(
            matches!(numeric(&numeric_bytes(&[], 0, 0xC000)).unwrap(), Cell::Float(f) if f.is_nan())
        );
        assert!(numeric(&[0, 1]).is_err());
    }

    #[test]
    fn times_of_day_print_like_postgres() {
        assert_eq!(time_of_day(6 * 3_600_000_000), "06:00:00");
        assert_eq!(time_of_day(3_600_000_000 + 61_000_001), "01:01:01.000001");
    }
}
