//! The wall clock as reports, the API, the agent list and the metrics write it.

/// The current time as RFC 3339 UTC, second precision.
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::now_utc());
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Seconds since the Unix epoch, as the metrics and the agent list export them (0 if the
/// clock is before the epoch).
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
