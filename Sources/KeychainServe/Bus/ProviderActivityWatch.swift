import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What another Secret Service provider tells the bus it stored while a switch moves its
/// items: the `ItemCreated` and `ItemChanged` signals it sends from its collections, and the
/// end of its connection.
///
/// A provider's signals reach every watcher in the order it sent them, and the bus announces
/// the end of its connection (`NameOwnerChanged` of its unique name) only after everything it
/// sent: once ``waitForEnd(within:)`` has seen that end, every item the provider stored before
/// it stopped has been reported by ``takeStored()``. That is how a switch tells, without the
/// provider running any more, whether anything arrived in it after its last listing.
///
/// Not `Sendable`: one thread uses it.
package final class ProviderActivityWatch {
    private let bus: BusConnection
    private let watched: String
    private var stored: Set<String> = []
    private var ended = false

    /// Starts watching the connection `uniqueName` (`:1.42`) on the session bus, or on the bus
    /// at `address` (a D-Bus address). Signals sent after this returns are all seen (the bus
    /// has the match rules by then).
    /// - Throws: ``ServeError/unavailable(_:)`` without libsystemd or a session bus.
    package init(of uniqueName: String, address: String? = nil) throws(ServeError) {
        bus = try BusConnection(address: address)
        watched = uniqueName
        // Asking for its own name waits until the connection is up, so that the match rules
        // below are installed by the time each call returns, not queued for later.
        guard !bus.uniqueName.isEmpty else { throw .unavailable("the session bus did not answer") }
        for member in ["ItemCreated", "ItemChanged"] {
            try bus.subscribe("type='signal',sender='\(uniqueName)',interface='org.freedesktop.Secret.Collection',member='\(member)'") { [unowned self] message in
                if case .objectPath(let path)? = try? message.arguments().first { self.stored.insert(path) }
            }
        }
        try bus.subscribe("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(uniqueName)'") {
            [unowned self] message in
            if let arguments = try? message.arguments(), arguments.count == 3, case .string(let newOwner) = arguments[2], newOwner.isEmpty { self.ended = true }
        }
    }

    /// The items (object paths) the provider said it created or changed since the last call,
    /// from every signal received so far.
    package func takeStored() -> Set<String> {
        _ = bus.processPending()
        defer { stored = [] }
        return stored
    }

    /// Waits, at most `limit`, until the provider's connection has ended; whether it has. The
    /// signals it sent before its end are all taken in by then (``takeStored()`` returns them).
    package func waitForEnd(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while !ended {
            guard bus.processPending(), ContinuousClock.now < deadline else { return ended }
            if !ended {
                // Until something arrives on the bus, or a short while, whichever is first.
                var descriptors = [pollfd(fd: bus.descriptor, events: Int16(POLLIN), revents: 0)]
                _ = try? SystemCall.poll(&descriptors, milliseconds: 50)
            }
        }
        return true
    }
}
