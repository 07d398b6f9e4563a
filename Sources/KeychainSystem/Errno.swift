#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: the C `errno`, the call that set it and the path it was given, so that
/// a message says what was tried on what. Paths and call names only: never an argument's
/// contents, so an error never carries a secret.
package struct Errno: Error, Equatable, CustomStringConvertible {
    /// The C `errno` value.
    package let code: Int32
    /// The system call that failed, by its C name (`open`, `read`, ...).
    package let call: String
    /// The path the call was given, or what the descriptor it was given is (nil when neither
    /// names anything useful).
    package let path: String?
    /// For `EFBIG` from a bounded read: the limit the input went past (nothing of it was used).
    package var limit: Int? = nil

    package init(_ code: Int32, call: String, path: String? = nil, limit: Int? = nil) {
        self.code = code
        self.call = call
        self.path = path
        self.limit = limit
    }

    /// The calling thread's `errno`, as the call named set it.
    package static func current(call: String, path: String? = nil) -> Errno {
        Errno(errno, call: call, path: path)
    }

    /// The C library's words for the code (`strerror`).
    package var reason: String { String(cString: strerror(code)) }

    /// `EINTR`: asked by the one retry, ``SystemCall/valueOrErrno(_:path:retryOnInterrupt:_:)``.
    var isInterrupted: Bool { code == EINTR }
    package var isReadOnly: Bool { code == EROFS }

    /// `call path: reason`, for example `open /home/a/vault.db: Permission denied`.
    package var description: String {
        let subject = path.map { "\(call) \($0)" } ?? call
        if let limit { return "\(subject): it holds more than the \(limit)-byte limit (nothing of it was used)" }
        return "\(subject): \(reason)"
    }
}
