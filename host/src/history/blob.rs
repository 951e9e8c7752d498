//! Session logs, evidence and workspace changes as the store keeps them: zstd frames (the
//! zstd library, level 1: fast, and about a tenth of a session log's size), read back
//! bounded.

use std::io::Read;

/// The most a stored blob may decompress to (a session log is bounded by the endpoint's
/// record: 32 MiB of bodies plus the log's own lines).
const MAX_BYTES: u64 = 256 * 1024 * 1024;

/// zstd's level: 1, its fastest regular level.
const LEVEL: i32 = 1;

thread_local! {
    /// Each thread's compression context, made once (making one per blob was 1.3% of a
    /// recorded suite's CPU).
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

pub(crate) fn compress(bytes: &[u8]) -> Vec<u8> {
    let compressed = COMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.is_none() {
            *cell = zstd::bulk::Compressor::new(LEVEL).ok();
        }
        cell.as_mut().map(|c| c.compress(bytes))
    });
    // Compressing into memory fails only when memory does: keep the bytes as they are then
    // (a frame that is not zstd is refused when read back, never misread).
    match compressed {
        Some(Ok(compressed)) => compressed,
        _ => bytes.to_vec(),
    }
}

pub(crate) fn decompress(compressed: &[u8]) -> Result<Vec<u8>, String> {
    let decoder = zstd::stream::read::Decoder::new(compressed)
        .map_err(|e| format!("not a zstd stream: {e}"))?;
    let mut bytes = Vec::new();
    decoder
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("corrupt zstd stream: {e}"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("larger than {MAX_BYTES} bytes"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_blob_comes_back_whole() {
        let log = "{\"type\":\"user_message\",\"text\":\"hi\"}\n".repeat(1000);
        let stored = super::compress(log.as_bytes());
        assert!(stored.len() < log.len() / 10, "{} bytes", stored.len());
        assert_eq!(super::decompress(&stored).unwrap(), log.as_bytes());
        assert!(super::decompress(b"not zstd").is_err());
    }
}
