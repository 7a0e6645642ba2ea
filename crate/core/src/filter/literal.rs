//! Filter literal text → a one-element Arrow array of a column's type.
//!
//! Hand-written instead of `arrow-cast`'s string parsing, which links chrono's time-zone and
//! formatting machinery and number formatting into the WebAssembly module for a handful of
//! literals per scan. Accepted forms: integers (with range checks), floats (`NaN`, `inf` too),
//! decimals (`-12.5`, at most the column's scale of fractional digits), dates `YYYY-MM-DD`,
//! timestamps `YYYY-MM-DD[ T]HH:MM[:SS[.fraction]][Z|±HH:MM]` (a zone-less value on a column with
//! a time zone is read as UTC), times `HH:MM[:SS[.fraction]]`, booleans, strings and binaries.

use std::sync::Arc;

use arrow_array::types::*;
use arrow_array::{
    ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Decimal128Array, Decimal256Array,
    LargeBinaryArray, LargeStringArray, PrimitiveArray, StringArray, StringViewArray,
};
use arrow_buffer::i256;
use arrow_schema::{DataType, TimeUnit};

/// Parses `text` as a value of `target`; `Err` says why it is not one.
pub fn parse_literal(text: &str, target: &DataType) -> Result<ArrayRef, String> {
    let t = text.trim();
    Ok(match target {
        DataType::Boolean => Arc::new(BooleanArray::from(vec![
            match t.to_ascii_lowercase().as_str() {
                "true" | "t" | "1" => true,
                "false" | "f" | "0" => false,
                _ => return Err("is not true or false".into()),
            },
        ])),
        DataType::Int8 => int::<Int8Type>(t)?,
        DataType::Int16 => int::<Int16Type>(t)?,
        DataType::Int32 => int::<Int32Type>(t)?,
        DataType::Int64 => int::<Int64Type>(t)?,
        DataType::UInt8 => uint::<UInt8Type>(t)?,
        DataType::UInt16 => uint::<UInt16Type>(t)?,
        DataType::UInt32 => uint::<UInt32Type>(t)?,
        DataType::UInt64 => uint::<UInt64Type>(t)?,
        DataType::Float16 => one::<Float16Type>(half::f16::from_f64(float(t)?)),
        DataType::Float32 => one::<Float32Type>(float(t)? as f32),
        DataType::Float64 => one::<Float64Type>(float(t)?),
        DataType::Decimal32(p, s) => {
            one_with::<Decimal32Type>(narrow(decimal(t, *p, *s)?)?, *p, *s)?
        }
        DataType::Decimal64(p, s) => {
            one_with::<Decimal64Type>(narrow(decimal(t, *p, *s)?)?, *p, *s)?
        }
        DataType::Decimal128(p, s) => Arc::new(
            Decimal128Array::from(vec![decimal(t, *p, *s)?])
                .with_precision_and_scale(*p, *s)
                .map_err(|e| e.to_string())?,
        ),
        DataType::Decimal256(p, s) => Arc::new(
            Decimal256Array::from(vec![i256::from_i128(decimal(t, *p, *s)?)])
                .with_precision_and_scale(*p, *s)
                .map_err(|e| e.to_string())?,
        ),
        DataType::Date32 => one::<Date32Type>(date(t)?),
        DataType::Date64 => one::<Date64Type>(i64::from(date(t)?) * 86_400_000),
        DataType::Timestamp(unit, tz) => timestamp(t, *unit, tz.clone())?,
        DataType::Time32(TimeUnit::Second) => {
            one::<Time32SecondType>((time_nanos(t)? / 1_000_000_000) as i32)
        }
        DataType::Time32(TimeUnit::Millisecond) => {
            one::<Time32MillisecondType>((time_nanos(t)? / 1_000_000) as i32)
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            one::<Time64MicrosecondType>(time_nanos(t)? / 1_000)
        }
        DataType::Time64(TimeUnit::Nanosecond) => one::<Time64NanosecondType>(time_nanos(t)?),
        DataType::Utf8 => Arc::new(StringArray::from(vec![text])),
        DataType::LargeUtf8 => Arc::new(LargeStringArray::from(vec![text])),
        DataType::Utf8View => Arc::new(StringViewArray::from(vec![text])),
        DataType::Binary => Arc::new(BinaryArray::from(vec![text.as_bytes()])),
        DataType::LargeBinary => Arc::new(LargeBinaryArray::from(vec![text.as_bytes()])),
        DataType::BinaryView => Arc::new(BinaryViewArray::from(vec![text.as_bytes()])),
        other => return Err(format!("cannot be compared with a {other} column")),
    })
}

/// A timestamp literal in `unit` (with the column's time zone); refused when more precise than
/// the unit, since truncating would change what `=`, `<` and `>=` mean.
fn timestamp(t: &str, unit: TimeUnit, tz: Option<Arc<str>>) -> Result<ArrayRef, String> {
    let nanos = timestamp_nanos(t)?;
    let per_unit: i128 = match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    };
    if nanos.rem_euclid(per_unit) != 0 {
        return Err(format!("is more precise than the column's unit ({unit:?})"));
    }
    let value = nanos.div_euclid(per_unit);
    let value = i64::try_from(value).map_err(|_| "is out of range".to_string())?;
    Ok(match unit {
        TimeUnit::Second => {
            Arc::new(PrimitiveArray::<TimestampSecondType>::from(vec![value]).with_timezone_opt(tz))
        }
        TimeUnit::Millisecond => Arc::new(
            PrimitiveArray::<TimestampMillisecondType>::from(vec![value]).with_timezone_opt(tz),
        ),
        TimeUnit::Microsecond => Arc::new(
            PrimitiveArray::<TimestampMicrosecondType>::from(vec![value]).with_timezone_opt(tz),
        ),
        TimeUnit::Nanosecond => Arc::new(
            PrimitiveArray::<TimestampNanosecondType>::from(vec![value]).with_timezone_opt(tz),
        ),
    })
}

fn one<T: ArrowPrimitiveType>(value: T::Native) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::from_iter_values([value]))
}

fn one_with<T: DecimalType>(value: T::Native, p: u8, s: i8) -> Result<ArrayRef, String> {
    Ok(Arc::new(
        PrimitiveArray::<T>::from_iter_values([value])
            .with_precision_and_scale(p, s)
            .map_err(|e| e.to_string())?,
    ))
}

fn narrow<N: TryFrom<i128>>(v: i128) -> Result<N, String> {
    N::try_from(v).map_err(|_| "is out of range".to_string())
}

fn int<T: ArrowPrimitiveType>(t: &str) -> Result<ArrayRef, String>
where
    T::Native: TryFrom<i64>,
{
    let v: i64 = t.parse().map_err(|_| "is not an integer".to_string())?;
    Ok(one::<T>(
        T::Native::try_from(v).map_err(|_| "is out of range".to_string())?,
    ))
}

fn uint<T: ArrowPrimitiveType>(t: &str) -> Result<ArrayRef, String>
where
    T::Native: TryFrom<u64>,
{
    let v: u64 = t
        .parse()
        .map_err(|_| "is not a non-negative integer".to_string())?;
    Ok(one::<T>(
        T::Native::try_from(v).map_err(|_| "is out of range".to_string())?,
    ))
}

fn float(t: &str) -> Result<f64, String> {
    match t.to_ascii_lowercase().as_str() {
        "nan" => Ok(f64::NAN),
        "inf" | "infinity" | "+inf" => Ok(f64::INFINITY),
        "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
        _ => t.parse().map_err(|_| "is not a number".to_string()),
    }
}

/// Unscaled value of a decimal literal with at most `scale` fractional digits.
fn decimal(t: &str, precision: u8, scale: i8) -> Result<i128, String> {
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let scale = usize::try_from(scale).map_err(|_| "needs a non-negative scale".to_string())?;
    let fraction = fraction.trim_end_matches('0');
    if fraction.len() > scale {
        return Err(format!("has more than {scale} decimal places"));
    }
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return Err("is not a decimal number".into());
    }
    let text = format!("{whole}{fraction:0<scale$}");
    let unscaled: i128 = text
        .trim_start_matches('0')
        .parse()
        .or_else(|_| {
            if text.bytes().all(|b| b == b'0') {
                Ok(0)
            } else {
                Err(())
            }
        })
        .map_err(|_| "is out of range".to_string())?;
    if unscaled.unsigned_abs() >= 10u128.pow(u32::from(precision.min(38))) {
        return Err(format!("does not fit {precision} digits"));
    }
    Ok(if negative { -unscaled } else { unscaled })
}

/// `YYYY-MM-DD` → days since 1970-01-01.
fn date(t: &str) -> Result<i32, String> {
    let bad = || "is not a date (YYYY-MM-DD)".to_string();
    let mut parts = t.splitn(3, '-');
    let (y, m, d) = (parts.next(), parts.next(), parts.next());
    let (Some(y), Some(m), Some(d)) = (y, m, d) else {
        return Err(bad());
    };
    let y: i64 = y.parse().map_err(|_| bad())?;
    let m: i64 = m.parse().map_err(|_| bad())?;
    let d: i64 = d.parse().map_err(|_| bad())?;
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days_in_month = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month[(m - 1) as usize] {
        return Err(bad());
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i32::try_from(era * 146_097 + doe - 719_468).map_err(|_| bad())
}

/// `HH:MM[:SS[.fraction]]` → nanoseconds since midnight.
fn time_nanos(t: &str) -> Result<i64, String> {
    let bad = || "is not a time (HH:MM[:SS[.fff]])".to_string();
    let mut parts = t.split(':');
    let h: i64 = parts.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
    let m: i64 = parts.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
    let (s, frac) = match parts.next() {
        None => (0, 0),
        Some(sec) => {
            let (whole, fraction) = sec.split_once('.').unwrap_or((sec, ""));
            if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            let frac = if fraction.is_empty() {
                0
            } else {
                format!("{fraction:0<9}").parse().map_err(|_| bad())?
            };
            (whole.parse::<i64>().map_err(|_| bad())?, frac)
        }
    };
    if parts.next().is_some()
        || !(0..24).contains(&h)
        || !(0..60).contains(&m)
        || !(0..61).contains(&s)
    {
        return Err(bad());
    }
    Ok(((h * 60 + m) * 60 + s) * 1_000_000_000 + frac)
}

/// A timestamp literal → nanoseconds since the epoch (UTC).
fn timestamp_nanos(t: &str) -> Result<i128, String> {
    let bad = || "is not a timestamp (YYYY-MM-DD[ T]HH:MM[:SS[.fff]][Z|±HH:MM])".to_string();
    if t.len() < 10 {
        return Err(bad());
    }
    let (date_part, rest) = t.split_at(10);
    let days = i128::from(date(date_part).map_err(|_| bad())?);
    let rest = rest.trim_start_matches(['T', 't', ' ']);
    let (clock, offset_seconds) = if rest.is_empty() {
        ("00:00", 0)
    } else if let Some(clock) = rest.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else if let Some(i) = rest.rfind(['+', '-']).filter(|i| *i > 0) {
        let (clock, zone) = rest.split_at(i);
        let sign = if zone.starts_with('-') { -1 } else { 1 };
        let zone = &zone[1..];
        let (zh, zm) = zone
            .split_once(':')
            .unwrap_or((zone.get(..2).unwrap_or(""), zone.get(2..).unwrap_or("0")));
        let zh: i128 = zh.parse().map_err(|_| bad())?;
        let zm: i128 = if zm.is_empty() {
            0
        } else {
            zm.parse().map_err(|_| bad())?
        };
        (clock, sign * (zh * 3600 + zm * 60))
    } else {
        (rest, 0)
    };
    let nanos_of_day = i128::from(time_nanos(clock).map_err(|_| bad())?);
    Ok(days * 86_400_000_000_000 + nanos_of_day - offset_seconds * 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;

    use super::*;

    fn value<T: ArrowPrimitiveType>(text: &str, t: &DataType) -> T::Native {
        parse_literal(text, t)
            .expect(text)
            .as_primitive::<T>()
            .value(0)
    }

    #[test]
    fn numbers_and_decimals() {
        assert_eq!(value::<Int8Type>("-128", &DataType::Int8), -128);
        assert!(parse_literal("128", &DataType::Int8).is_err());
        assert!(parse_literal("2.5", &DataType::Int64).is_err());
        assert_eq!(
            value::<UInt64Type>("18446744073709551615", &DataType::UInt64),
            u64::MAX
        );
        assert!(value::<Float64Type>("NaN", &DataType::Float64).is_nan());
        let dec = DataType::Decimal128(15, 2);
        assert_eq!(value::<Decimal128Type>("0.05", &dec), 5);
        assert_eq!(value::<Decimal128Type>("-12.5", &dec), -1250);
        assert_eq!(value::<Decimal128Type>("7", &dec), 700);
        assert_eq!(value::<Decimal128Type>("1.230", &dec), 123);
        assert!(parse_literal("0.055", &dec).is_err());
        assert!(parse_literal("1e3", &dec).is_err());
        assert!(parse_literal("1000000000000000", &dec).is_err());
    }

    #[test]
    fn dates_times_and_timestamps() {
        assert_eq!(value::<Date32Type>("1994-01-01", &DataType::Date32), 8766);
        assert_eq!(value::<Date32Type>("1969-12-31", &DataType::Date32), -1);
        assert!(parse_literal("1994-02-30", &DataType::Date32).is_err());
        let us = DataType::Timestamp(TimeUnit::Microsecond, None);
        assert_eq!(
            value::<TimestampMicrosecondType>("1970-01-01T00:00:01.5", &us),
            1_500_000
        );
        assert!(parse_literal("1970-01-01T00:00:00.0000005", &us).is_err());
        assert_eq!(
            value::<TimestampMicrosecondType>("1970-01-01 01:00:00+01:00", &us),
            0
        );
        assert_eq!(
            value::<TimestampMicrosecondType>("1970-01-02", &us),
            86_400_000_000
        );
        let s = DataType::Timestamp(TimeUnit::Second, Some("UTC".into()));
        assert_eq!(
            value::<TimestampSecondType>("2024-01-01T00:00:00Z", &s),
            1_704_067_200
        );
        assert_eq!(
            value::<Time64MicrosecondType>("12:30:15.25", &DataType::Time64(TimeUnit::Microsecond)),
            45_015_250_000
        );
        assert!(parse_literal("25:00", &DataType::Time32(TimeUnit::Second)).is_err());
    }
}
