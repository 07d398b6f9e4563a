internal import COpenSSL

/// A failure reported by libcrypto. Not public: the vault maps it to ``StoreError``.
/// It carries OpenSSL's reason string only, never data.
package struct OpenSSLError: Error, CustomStringConvertible {
    let operation: String
    let reason: String

    init(_ operation: String) {
        self.operation = operation
        let code = ERR_get_error()
        if code == 0 {
            reason = "no detail"
        } else {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        ERR_clear_error()
    }

    package var description: String { "\(operation): \(reason)" }
}

extension StoreError {
    /// Runs OpenSSL work, its failure reported as every store reports one: an I/O error that
    /// names OpenSSL's operation and reason, never data.
    static func fromOpenSSL<R>(_ body: () throws(OpenSSLError) -> R) throws(StoreError) -> R {
        do { return try body() } catch { throw .io("OpenSSL: \(error.description)") }
    }
}
