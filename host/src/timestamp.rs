//! Timestamps as text to Unix time, and back: the one parser of the nexus journal
//! (`2026-05-01T12:00:00.01Z`), Inspect's logs (`2026-12-03T21:09:12.785197+00:00`) and ATIF
//! trajectories (Python's `datetime.isoformat()`, its offset often left out).
//!
//! One grammar, ISO 8601's extended form: a date `YYYY-MM-DD`; then `T` (or `t`, or a space)
//! and a time `HH:MM`, `HH:MM:SS` (`60`, a leap second, allowed) or `HH:MM:SS.f` (`,` too,
//! any number of digits, cut to the microsecond); then `Z` (or `z`) or an offset `±HH:MM`,
//! `±HHMM` or `±HH`. RFC 3339 ([`parse_rfc3339_ms`], [`parse_rfc3339_us`]) requires the time
//! with its seconds and the offset; [`parse_iso8601_ms`] lets them go (no offset: UTC).

/// Milliseconds since the Unix epoch of an RFC 3339 timestamp, or `None`.
pub(crate) fn parse_rfc3339_ms(ts: &str) -> Option<i64> {
    Some(unix_us(ts, Form::Rfc3339)?.div_euclid(1_000))
}

/// Microseconds since the Unix epoch of an RFC 3339 timestamp, or `None` (Inspect's tools take
/// a few milliseconds).
pub(crate) fn parse_rfc3339_us(ts: &str) -> Option<i64> {
    unix_us(ts, Form::Rfc3339)
}

/// Milliseconds since the Unix epoch of an ISO 8601 timestamp as Harbor's agents write them
/// (`2026-12-03T10:00:01.250000+00:00`, `2026-12-03 10:00`, `2026-12-03`): the time, its
/// seconds and the offset may be left out (no offset: UTC). `None` for anything else.
pub(crate) fn parse_iso8601_ms(ts: &str) -> Option<i64> {
    Some(unix_us(ts, Form::Iso8601)?.div_euclid(1_000))
}

/// `2026-05-01T12:00:00.010Z` for Unix milliseconds.
pub(crate) fn format_rfc3339_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1_000);
    let millis = ms.rem_euclid(1_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

/// How much of the grammar a caller requires.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The date, the time with its seconds, and `Z` or an offset.
    Rfc3339,
    /// The date; the rest as it comes.
    Iso8601,
}

/// Microseconds since the Unix epoch of `ts` in `form`, or `None`.
fn unix_us(ts: &str, form: Form) -> Option<i64> {
    let b = ts.as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let s = b.get(from..from + n)?;
        s.iter()
            .all(u8::is_ascii_digit)
            .then(|| s.iter().fold(0, |acc, d| acc * 10 + i64::from(d - b'0')))
    };
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    if b[4] != b'-' || b[7] != b'-' || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (mut hour, mut minute, mut second, mut micros) = (0, 0, 0, 0);
    let mut has_seconds = false;
    let mut i = 10;
    if matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        hour = digits(11, 2)?;
        minute = digits(14, 2)?;
        if b[13] != b':' || hour > 23 || minute > 59 {
            return None;
        }
        i = 16;
        if b.get(16) == Some(&b':') {
            second = digits(17, 2)?;
            if second > 60 {
                return None;
            }
            has_seconds = true;
            i = 19;
            if matches!(b.get(19), Some(b'.' | b',')) {
                let n = b[20..].iter().take_while(|d| d.is_ascii_digit()).count();
                if n == 0 {
                    return None;
                }
                let kept = n.min(6);
                micros = digits(20, kept)? * 10_i64.pow((6 - kept) as u32);
                i = 20 + n;
            }
        }
    }
    let offset_minutes = match &b[i..] {
        [] if form == Form::Iso8601 => 0,
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (h, m) = match rest.len() {
                2 => (digits(i + 1, 2)?, 0),
                4 => (digits(i + 1, 2)?, digits(i + 3, 2)?),
                5 if rest[2] == b':' => (digits(i + 1, 2)?, digits(i + 4, 2)?),
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            if *sign == b'-' {
                -(h * 60 + m)
            } else {
                h * 60 + m
            }
        }
        _ => return None,
    };
    if form == Form::Rfc3339 && !has_seconds {
        return None;
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
        - offset_minutes * 60;
    Some(seconds * 1_000_000 + micros)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nexus journal's `ts` and `created_at`.
    #[test]
    fn parses_fractions_and_offsets() {
        let base = parse_rfc3339_ms("2026-05-01T12:00:00Z").unwrap();
        assert_eq!(parse_rfc3339_ms("2026-05-01T12:00:00.01Z"), Some(base + 10));
        assert_eq!(
            parse_rfc3339_ms("2026-05-01T12:00:00.123456789Z"),
            Some(base + 123)
        );
        assert_eq!(parse_rfc3339_ms("2026-05-01T14:00:00+02:00"), Some(base));
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:01Z"), Some(1_000));
        assert_eq!(format_rfc3339_ms(base + 10), "2026-05-01T12:00:00.010Z");
        for bad in [
            "",
            "2026-05-01",
            "2026-13-01T00:00:00Z",
            "2026-05-01T12:00:00",
            "x026-05-01T12:00:00Z",
            "2026-05-01T12:00:00.Z",
        ] {
            assert_eq!(parse_rfc3339_ms(bad), None, "{bad}");
        }
    }

    /// Inspect's `timestamp`, `completed`, `started_at` and `completed_at`.
    #[test]
    fn inspect_timestamps_parse_to_the_microsecond() {
        let base = parse_rfc3339_us("2026-12-03T21:09:12+00:00").unwrap();
        assert_eq!(
            parse_rfc3339_us("2026-12-03T21:09:12.785197+00:00"),
            Some(base + 785_197)
        );
        assert_eq!(
            parse_rfc3339_us("2026-12-03T22:09:12.5+01:00"),
            Some(base + 500_000)
        );
        assert_eq!(parse_rfc3339_us("1970-01-01T00:00:01Z"), Some(1_000_000));
        for bad in [
            "",
            "2026-12-03",
            "2026-12-03T21:09:12",
            "2026-12-03T21:09:12.Z",
        ] {
            assert_eq!(parse_rfc3339_us(bad), None, "{bad}");
        }
    }

    /// An ATIF step's `timestamp`.
    #[test]
    fn iso_8601_timestamps_as_python_writes_them() {
        let base = parse_iso8601_ms("2026-12-03T10:00:00+00:00").unwrap();
        for (ts, ms) in [
            ("2026-12-03T10:00:00Z", 0),
            ("2026-12-03T10:00:00", 0),
            ("2026-12-03 10:00:00.5", 500),
            ("2026-12-03T10:00:01.250000+00:00", 1_250),
            ("2026-12-03T10:00:01,2Z", 1_200),
            ("2026-12-03T11:00:00+01:00", 0),
            ("2026-12-03T11:00:00+0100", 0),
            ("2026-12-03T09:00:00-01", 0),
            ("2026-12-03T10:00", 0),
            ("2026-12-03", -36_000_000),
        ] {
            assert_eq!(parse_iso8601_ms(ts), Some(base + ms), "{ts}");
        }
        assert_eq!(parse_iso8601_ms("1970-01-01T00:00:01Z"), Some(1_000));
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-12-03T24:00:00Z",
            "2026-12-03T10:00:00.Z",
            "2026-12-03T10:00:00+1",
            "2026-12-03T10:00:00 UTC",
            "20261203T100000",
            "yesterday",
        ] {
            assert_eq!(parse_iso8601_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn one_grammar_each_form_requiring_its_parts() {
        // A leap second is the minute's 60th second; an offset is at most 23:59.
        let minute = parse_rfc3339_ms("2026-12-31T23:59:00Z").unwrap();
        assert_eq!(
            parse_rfc3339_ms("2026-12-31T23:59:60Z"),
            Some(minute + 60_000)
        );
        assert_eq!(
            parse_iso8601_ms("2026-12-31T23:59:60Z"),
            Some(minute + 60_000)
        );
        assert_eq!(parse_rfc3339_ms("2026-12-31T23:59:00+24:00"), None);
        assert_eq!(parse_rfc3339_ms("2026-12-31T23:59:00+00:60"), None);
        // RFC 3339 takes ISO 8601's other offsets and decimal comma, never a partial time.
        assert_eq!(parse_rfc3339_ms("2027-01-01T00:59:00,0+0100"), Some(minute));
        for partial in ["2026-12-31T23:59Z", "2026-12-31Z", "2026-12-31T23:59:00.5"] {
            assert_eq!(parse_rfc3339_us(partial), None, "{partial}");
            assert!(parse_iso8601_ms(partial).is_some(), "{partial}");
        }
        // Before 1970, the fraction still counts forward from its second.
        assert_eq!(parse_rfc3339_ms("1969-12-31T23:59:59.9Z"), Some(-100));
        assert_eq!(parse_rfc3339_us("1969-12-31T23:59:59.9Z"), Some(-100_000));
    }
}
