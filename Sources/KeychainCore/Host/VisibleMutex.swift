internal import KeychainSystem
import Synchronization

/// A `Mutex` that ThreadSanitizer sees: `Synchronization.Mutex` waits on futexes, which it does
/// not intercept, so every access the lock guards would look like a race between the threads
/// that take it in turn (the system layer's `SanitizerVisibility` tells it). Outside
/// ThreadSanitizer it is a `Mutex` and two calls that do nothing.
///
/// In KeychainCore rather than in the system layer because the vault takes it on every call:
/// across a module line `withLock` is not specialised for the caller's type, and looks its
/// value's type up at run time on every call, where here it is specialised for the vault's
/// state as `Mutex` is.
package struct VisibleMutex<Value: ~Copyable>: ~Copyable {
    private let mutex: Mutex<Value>
    /// The address ThreadSanitizer knows this lock by.
    private let identity = Identity()

    private final class Identity: Sendable {}

    package init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` on the value under the lock, as `Mutex.withLock` does.
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            SanitizerVisibility.acquired(identity)
            defer { SanitizerVisibility.releasing(identity) }
            return try body(&value)
        }
    }
}

extension VisibleMutex: Sendable where Value: ~Copyable {}
