internal import COpenSSL

/// How OpenSSL is set up in this process.
///
/// By default OpenSSL reads the system's `openssl.cnf` and loads the text of all its error
/// messages at its first use, and frees everything it built (its method stores, its name maps)
/// in an `atexit` handler: together a large share of a short-lived command's work
/// (keychain-bench's `keychain get (fresh process)` row). KeychainCore needs neither: it
/// names its algorithms from the default provider and loads no engines or other providers, and
/// it frees its own keys (cleansed) before exit. A program that uses OpenSSL only through
/// KeychainCore can skip both; a program with TLS of its own (libcurl, a server) should let
/// OpenSSL read its configuration, since system policy (minimum TLS versions, crypto policies)
/// lives there.
package enum OpenSSLConfiguration {
    /// Initialises OpenSSL for a short-lived program: without reading the system configuration
    /// file, without its error texts (an OpenSSL failure, which only a failed allocation causes
    /// on the paths KeychainCore takes, is then reported by its code), without its clean-up
    /// at exit (the process's memory goes back to the kernel in one piece), and without its
    /// legacy name tables (every cipher and digest registered by name, then copied into the
    /// provider name map at the first fetch, the largest part of that share).
    /// KeychainCore fetches algorithms by their provider names and never looks one up in the
    /// legacy tables (`EVP_get_cipherbyname` and `EVP_get_digestbyname` find nothing after
    /// this). Call it before anything in the process uses OpenSSL; afterwards it changes
    /// nothing (OpenSSL initialises once). Never throws: a failed initialisation shows at the
    /// first use.
    package static func setUpForShortLivedProgram() {
        let options =
            UInt64(OPENSSL_INIT_NO_LOAD_CONFIG) | UInt64(OPENSSL_INIT_NO_ATEXIT) | UInt64(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS)
            | UInt64(OPENSSL_INIT_NO_ADD_ALL_CIPHERS) | UInt64(OPENSSL_INIT_NO_ADD_ALL_DIGESTS)
        _ = OPENSSL_init_crypto(options, nil)
    }

    /// Why OpenSSL's algorithms cannot be used in this process, or nil when they can. OpenSSL
    /// reads `openssl.cnf` (or the file `OPENSSL_CONF` names) at its first use unless told
    /// otherwise; a configuration that names providers which do not load leaves it with no
    /// algorithm at all, and every digest after that fails, which a vault would otherwise read
    /// as a checksum that does not match, that is, as a corrupted file. The test is a fetch of
    /// SHA-256 (after the first, a lookup in OpenSSL's cache).
    static var initialisationFailure: String? {
        if let digest = EVP_MD_fetch(nil, "SHA256", nil) {
            EVP_MD_free(digest)
            return nil
        }
        let reason = OpenSSLError("OpenSSL initialisation").reason
        return "OpenSSL has no SHA-256 in this process (\(reason)); check the configuration file OPENSSL_CONF names, or openssl.cnf"
    }
}
