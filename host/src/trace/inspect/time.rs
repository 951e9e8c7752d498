//! Inspect's timestamps (`2026-12-03T21:09:12.785197+00:00`, RFC 3339) as microseconds since
//! the Unix epoch. The same parse as `case/nexus/time.rs`, at microseconds (Inspect's tools
//! take a few milliseconds), which a layer-3 module cannot use.

/// Microseconds since the Unix epoch, or `None` when `ts` is not RFC 3339.
pub(super) fn parse_rfc3339_us(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok())?
    };
    let year = num(ts.get(0..4)?)?;
    let month = num(ts.get(5..7)?)?;
    let day = num(ts.get(8..10)?)?;
    let hour = num(ts.get(11..13)?)?;
    let minute = num(ts.get(14..16)?)?;
    let second = num(ts.get(17..19)?)?;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = ts.get(19..)?;
    let mut micros = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        micros = format!("{:0<6}", &frac[..digits.min(6)]).parse().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            sign * (num(&rest[1..3])? * 60 + num(&rest[4..6])?)
        }
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_min * 60;
    Some(secs * 1_000_000 + micros)
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

#[cfg(test)]
mod tests {
    use super::parse_rfc3339_us;

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
}
