//! TLS for every HTTP client in the process (the agent's, live providers', the judge's,
//! OCI registries'): rustls with the ring crypto provider (no C toolchain beyond cc).

/// Install rustls's ring crypto provider as the process default, once; later calls do
/// nothing. reqwest is built with `rustls-no-provider`, so **every** `reqwest::Client` in the
/// process must be built after this has run (each client's constructor calls it).
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Fails only when a provider is already installed, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
