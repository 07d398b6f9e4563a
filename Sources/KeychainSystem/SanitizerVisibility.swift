internal import CSystem

/// What a lock ThreadSanitizer cannot see tells it: `Synchronization.Mutex` waits on futexes,
/// which it does not intercept, so every access such a lock guards would look like a race
/// between the threads that take it in turn. Outside ThreadSanitizer both calls do nothing.
package enum SanitizerVisibility {
    /// After taking the lock that `owner` holds.
    package static func acquired(_ owner: AnyObject) {
        csystem_sanitizer_acquire(Unmanaged.passUnretained(owner).toOpaque())
    }

    /// Before letting that lock go.
    package static func releasing(_ owner: AnyObject) {
        csystem_sanitizer_release(Unmanaged.passUnretained(owner).toOpaque())
    }
}
