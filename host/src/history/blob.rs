//! Session logs and evidence as the store keeps them: zstd frames (ruzstd, the decoder
//! Nexus journals already use; its encoder's fastest level), read back bounded.

use std::io::Read;

/// The most a stored blob may decompress to (a session log is bounded by the endpoint's
/// record: 32 MiB of bodies plus the log's own lines).
const MAX_BYTES: u64 = 256 * 1024 * 1024;

pub(crate) fn compress(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

pub(crate) fn decompress(compressed: &[u8]) -> Result<Vec<u8>, String> {
    let decoder = ruzstd::decoding::StreamingDecoder::new(compressed)
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
