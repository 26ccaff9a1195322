//! The TLS set-up of the HTTP clients: the one reqwest builds by default (rustls, TLS 1.2 and
//! 1.3, the system's roots through `rustls-platform-verifier`, ALPN `http/1.1`), except that the
//! system's roots (hundreds of files, milliseconds of parsing) are read at the first handshake
//! that needs them ([`LazyVerifier`]), or ahead of it when a caller knows one will come
//! ([`Tls::warm`]). A client that only ever speaks plain `http://` never reads them.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_platform_verifier::Verifier;

/// A client's TLS configuration and a handle on its verifier.
pub(crate) struct Tls {
    pub(crate) config: rustls::ClientConfig,
    verifier: Arc<LazyVerifier>,
}

impl Tls {
    /// The configuration reqwest would build with `provider`; None when rustls refuses it.
    pub(crate) fn new(provider: Arc<CryptoProvider>) -> Option<Tls> {
        let verifier = Arc::new(LazyVerifier {
            provider: provider.clone(),
            inner: OnceLock::new(),
        });
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(rustls::ALL_VERSIONS)
            .ok()?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone())
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Some(Tls { config, verifier })
    }

    /// Read the system's roots now (on the caller's thread), for a handshake to come.
    pub(crate) fn warm(&self) {
        let _ = self.verifier.inner();
    }
}

/// The platform verifier, made (and its roots read) the first time a certificate is checked.
#[derive(Debug)]
struct LazyVerifier {
    provider: Arc<CryptoProvider>,
    inner: OnceLock<Result<Verifier, rustls::Error>>,
}

impl LazyVerifier {
    fn inner(&self) -> Result<&Verifier, rustls::Error> {
        self.inner
            .get_or_init(|| Verifier::new(self.provider.clone()))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner()?.verify_tls13_signature(message, cert, dss)
    }

    /// The schemes the provider verifies: what the platform verifier answers too, without
    /// reading the roots.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
