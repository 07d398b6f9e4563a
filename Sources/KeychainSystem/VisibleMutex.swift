import Synchronization

/// A `Mutex` that ThreadSanitizer sees: `Synchronization.Mutex` waits on futexes, which it does
/// not intercept, so every access the lock guards would look like a race between the threads
/// that take it in turn (``SanitizerVisibility``). Outside ThreadSanitizer it is a `Mutex` and
/// two calls that do nothing.
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
