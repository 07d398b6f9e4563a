#if canImport(Glibc)
    import Glibc
#endif

/// State guarded by a pthread mutex, with a condition variable on the monotonic clock for a
/// thread that waits for it to change by a deadline: what `Mutex` cannot give (it has no wait).
/// The mutex and condition are allocated once, so their addresses never move (a pthread object
/// stored inline in a Swift value may be moved, which POSIX forbids). ThreadSanitizer sees
/// every hand-over, as it does not see a contended `Mutex`'s on Linux (in the kernel).
package final class Condition<State: Sendable>: @unchecked Sendable {
    // Every access to `state` holds `mutex`: that is what makes this type Sendable.
    private var state: State
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` on the state under the lock, then wakes the waiting thread.
    package func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_signal(condition)
            pthread_mutex_unlock(mutex)
        }
        return body(&state)
    }

    /// Runs `step` under the lock for ever: after each, waits (the lock released meanwhile)
    /// until woken by ``withLock(_:)`` or until the CLOCK_MONOTONIC nanoseconds it returned
    /// (nil: until woken).
    package func serve(_ step: (inout State) -> UInt64?) -> Never {
        pthread_mutex_lock(mutex)
        while true {
            guard let until = step(&state) else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            var time = timespec(tv_sec: Int(until / 1_000_000_000), tv_nsec: Int(until % 1_000_000_000))
            _ = pthread_cond_timedwait(condition, mutex, &time)
        }
    }
}
