import Dispatch

/// A repeating timer on a background queue that calls its handler until it is let go: the last
/// reference gone, it cancels itself, so a lock that drops it stops it.
final class IdleTimer {
    private let source: DispatchSourceTimer

    init(every interval: Duration, _ handler: @escaping @Sendable () -> Void) {
        let nanoseconds = Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        source.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        source.setEventHandler(handler: handler)
        source.resume()
    }

    deinit {
        source.cancel()
    }
}
