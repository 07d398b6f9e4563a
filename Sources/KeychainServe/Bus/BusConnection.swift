internal import CSDBus
import KeychainCore
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's connection to the user's session bus (`sd_bus_open_user`: the bus of
/// `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`), served from one thread.
///
/// Not `Sendable`: every call, and every handler, runs on the thread that runs ``run()``.
final class BusConnection {
    let pointer: OpaquePointer
    /// Handlers registered with sd-bus, kept alive as long as the connection (sd-bus holds only
    /// their unretained addresses).
    private var handlers: [Handler] = []
    private var stopReason: String?
    /// Descriptors the loop polls beside the bus (an unlock dialog's end), each with what to run
    /// on the bus thread when it is readable.
    private var watches: [Int32: () -> Void] = [:]
    /// What runs between messages at least every `checkSeconds` while the loop waits, and may
    /// end it (an idle daemon's exit): the reason to stop, or nil.
    private var check: (() -> String?)?
    private var checkSeconds = 1

    final class Handler {
        let body: (BusMessage) -> Int32
        init(_ body: @escaping (BusMessage) -> Int32) { self.body = body }
    }

    /// Connects to the session bus, or with `system` to the system bus (logind's signals).
    /// - Throws: ``ServeError/unavailable(_:)`` when libsystemd cannot be loaded or there is no bus.
    init(system: Bool = false, address: String? = nil) throws(ServeError) {
        var message = [CChar](repeating: 0, count: 256)
        guard csdbus_load(&message) == 0 else {
            throw .unavailable(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        var bus: OpaquePointer?
        let opened = address.map { csdbus_open_address($0, &bus) } ?? (system ? csdbus_open_system(&bus) : csdbus_open_user(&bus))
        if system, opened < 0 || bus == nil { throw .unavailable("no system bus (\(String(cString: strerror(-opened))))") }
        guard opened >= 0, let bus else {
            throw .unavailable(
                "no session bus to serve on (\(String(cString: strerror(-opened)))): set DBUS_SESSION_BUS_ADDRESS, or start one with dbus-run-session or systemd --user")
        }
        pointer = bus
    }

    deinit { csdbus_close(pointer) }

    /// This connection's unique name on the bus (`:1.42`).
    var uniqueName: String {
        var name: UnsafePointer<CChar>?
        guard csdbus_get_unique_name(pointer, &name) >= 0, let name else { return "" }
        return String(cString: name)
    }

    /// Takes `name` on the bus, letting a later provider replace this one; with `replace`, takes
    /// it from its current owner if that owner allows it; with `queue`, an owner that does not
    /// let it go keeps it, and this connection waits in the bus's queue, getting the name the
    /// moment that owner ends or gives it up.
    /// - Returns: whether this connection owns the name now (false: it waits in the queue).
    /// - Throws: ``ServeError/nameTaken(_:replaceRefused:)`` when another connection owns it (and would not
    ///   give it up) and `queue` is not given.
    @discardableResult
    func requestName(_ name: String, replace: Bool, queue: Bool = false) throws(ServeError) -> Bool {
        let flags =
            UInt64(CSDBUS_NAME_ALLOW_REPLACEMENT) | (replace ? UInt64(CSDBUS_NAME_REPLACE_EXISTING) : 0) | (queue ? UInt64(CSDBUS_NAME_QUEUE) : 0)
        let result = csdbus_request_name(pointer, name, flags)
        if result == -EEXIST { throw .nameTaken(name, replaceRefused: replace) }
        if result < 0 { throw .unavailable("requesting \(name) on the session bus failed: \(String(cString: strerror(-result)))") }
        // sd-bus: 1 for the primary owner, 0 for a place in the queue.
        return result > 0
    }

    /// Gives up `name` on the bus: calls to it from now on go to whoever takes it next, or
    /// start its activation file's program again.
    func releaseName(_ name: String) { _ = csdbus_release_name(pointer, name) }

    /// Calls `body` for every message to `prefix` or below; `body` returns 1 when it replied.
    func serve(under prefix: String, _ body: @escaping (BusMessage) -> Int32) throws(ServeError) {
        let handler = Handler(body)
        handlers.append(handler)
        let result = csdbus_add_fallback(pointer, prefix, Self.trampoline, Unmanaged.passUnretained(handler).toOpaque())
        if result < 0 { throw .unavailable("registering \(prefix) failed: \(String(cString: strerror(-result)))") }
    }

    /// Calls `body` for every message the match rule selects.
    func subscribe(_ rule: String, _ body: @escaping (BusMessage) -> Void) throws(ServeError) {
        let handler = Handler { message in
            body(message)
            return 0
        }
        handlers.append(handler)
        let result = csdbus_add_match(pointer, rule, Self.trampoline, Unmanaged.passUnretained(handler).toOpaque())
        if result < 0 { throw .unavailable("subscribing to \(rule) failed: \(String(cString: strerror(-result)))") }
    }

    private static let trampoline: csdbus_handler = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        return Unmanaged<Handler>.fromOpaque(userdata).takeUnretainedValue().body(BusMessage(pointer: message))
    }

    /// Queues `message` for sending.
    func send(_ message: OutgoingMessage) {
        // A client gone before its reply is not the daemon's failure.
        _ = csdbus_send(pointer, message.pointer)
    }

    /// Makes ``run()`` return, with `reason`, once the message being handled is done.
    func stop(_ reason: String) { stopReason = reason }

    /// Runs `body` on the bus thread whenever `descriptor` is readable, until ``unwatch(_:)``:
    /// how work done on another thread hands its result back without the loop ever blocking on it.
    func watch(_ descriptor: Int32, _ body: @escaping () -> Void) { watches[descriptor] = body }

    func unwatch(_ descriptor: Int32) { watches[descriptor] = nil }

    /// Runs `body` on the bus thread between messages, at least every `seconds` (one or more)
    /// while the loop waits; a reason it returns ends ``run()`` with that reason.
    func check(everySeconds seconds: Int, _ body: @escaping () -> String?) {
        check = body
        checkSeconds = max(1, seconds)
    }

    /// The connection's descriptor, for a loop that polls it beside another (-1 on failure).
    var descriptor: Int32 { csdbus_get_fd(pointer) }

    /// Handles every message already received, without waiting; false once the connection failed.
    func processPending() -> Bool {
        while true {
            let processed = csdbus_process(pointer)
            if processed < 0 { return false }
            if processed == 0 { return true }
        }
    }

    /// Handles messages until ``stop(_:)`` or a failure of the connection.
    /// - Returns: why it stopped.
    /// - Throws: ``ServeError/unavailable(_:)`` when the bus connection fails.
    func run() throws(ServeError) -> String {
        while stopReason == nil {
            let processed = csdbus_process(pointer)
            if processed < 0 { throw .unavailable("the session bus connection failed: \(String(cString: strerror(-processed)))") }
            if processed > 0 { continue }
            if let check, let reason = check() {
                stopReason = reason
                break
            }
            try waitForBusOrWatches()
        }
        // Calls that came before the name was given up (an idle exit) are answered, not dropped.
        while csdbus_process(pointer) > 0 {}
        _ = csdbus_flush(pointer)
        return stopReason!
    }

    /// What `sd_bus_wait` does, with the watched descriptors polled too: one `poll` over the
    /// bus's descriptor (for the events and until the time sd-bus asks for) and theirs, for
    /// at most `checkSeconds` when there is a check to run.
    private func waitForBusOrWatches() throws(ServeError) {
        let descriptor = csdbus_get_fd(pointer), events = csdbus_get_events(pointer)
        var due: UInt64 = 0
        let timed = csdbus_get_timeout(pointer, &due)
        guard descriptor >= 0, events >= 0, timed >= 0 else {
            throw .unavailable("the session bus connection failed: \(String(cString: strerror(-min(descriptor, events, timed))))")
        }
        var timeout: Int32 = -1
        if due != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
            timeout = due <= nowMicroseconds ? 0 : Int32(clamping: (due - nowMicroseconds + 999) / 1_000)
        }
        if check != nil {
            let interval = Int32(clamping: checkSeconds * 1_000)
            timeout = timeout < 0 ? interval : min(timeout, interval)
        }
        let watched = watches.keys.sorted()
        var descriptors = [pollfd(fd: descriptor, events: Int16(truncatingIfNeeded: events), revents: 0)]
        descriptors += watched.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready: Int
        do { ready = try SystemCall.poll(&descriptors, milliseconds: timeout) } catch {
            throw .unavailable("waiting on the session bus failed: \(error.reason)")
        }
        guard ready > 0 else { return }
        for (index, watchedDescriptor) in watched.enumerated() where descriptors[index + 1].revents != 0 {
            watches[watchedDescriptor]?()
        }
    }
}
