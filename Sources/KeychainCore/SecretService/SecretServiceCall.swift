import Dispatch
internal import KeychainSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A point on the monotonic clock by which a whole Secret Service operation must finish.
struct Deadline: Sendable {
    let nanoseconds: UInt64

    static func now() -> UInt64 {
        var time = Glibc.timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    init(after duration: Duration) {
        let (seconds, attoseconds) = duration.components
        // The configuration clamps the timeout, so this cannot overflow.
        nanoseconds = Self.now() + UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// What is left, in milliseconds (0 once passed).
    var remainingMilliseconds: Int32 {
        let now = Self.now()
        guard nanoseconds > now else { return 0 }
        return Int32(clamping: (nanoseconds - now + 999_999) / 1_000_000)
    }

    /// What is left, as a Dispatch timeout from now.
    var dispatchTimeout: DispatchTime {
        let now = Self.now()
        return .now() + .nanoseconds(nanoseconds > now ? Int(clamping: nanoseconds - now) : 0)
    }
}

/// One thread for the whole process that cancels calls whose deadline passed. Its own thread,
/// not a dispatch queue: callers blocked in libsecret may exhaust Dispatch's pool, and the
/// watchdog must still fire for them.
final class CallWatchdog: Sendable {
    static let shared = CallWatchdog()

    private struct Watches {
        var armed: [UInt64: (deadline: UInt64, action: @Sendable () -> Void)] = [:]
        var nextToken: UInt64 = 0
    }
    /// Each change wakes the watchdog's thread, which looks again for the earliest deadline.
    private let watches = Condition(Watches())

    private init() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, nil,
            { context in
                Unmanaged<CallWatchdog>.fromOpaque(context!).takeUnretainedValue().run()
                return nil
            }, context)
        pthread_detach(thread)
    }

    /// Runs `action` at `deadline` unless disarmed first. The action runs under the watchdog's
    /// lock, so once ``disarm(_:)`` returns it is not running and never will.
    func arm(_ deadline: Deadline, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        watches.withLock {
            $0.nextToken += 1
            $0.armed[$0.nextToken] = (deadline.nanoseconds, action)
            return $0.nextToken
        }
    }

    /// Stops a watch; true when its action had already run.
    func disarm(_ token: UInt64) -> Bool {
        watches.withLock { $0.armed.removeValue(forKey: token) == nil }
    }

    /// Fires what is due, under the lock, and waits until the next deadline or a change.
    private func run() {
        watches.serve { watches in
            while let (token, entry) = watches.armed.min(by: { $0.value.deadline < $1.value.deadline }) {
                guard entry.deadline <= Deadline.now() else { return entry.deadline }
                watches.armed[token] = nil
                entry.action()
            }
            return nil
        }
    }
}

extension Deadline {
    init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
}

/// A mutual-exclusion gate whose wait is bounded by a deadline: callers queued behind a
/// frozen daemon give up with the rest of their operation's time, instead of queueing for
/// each other's whole timeouts.
final class TimedGate: Sendable {
    private let open: DispatchSemaphore

    init() {
        // Made closed and opened once: Dispatch refuses to free a semaphore left below the
        // value it was made with, as one entered and never left would be.
        open = DispatchSemaphore(value: 0)
        open.signal()
    }

    /// Enters the gate; false when the deadline passed first.
    func enter(by deadline: Deadline) -> Bool {
        open.wait(timeout: deadline.dispatchTimeout) == .success
    }

    func leave() {
        open.signal()
    }
}

/// The libsecret calls of one operation, all within one deadline: each call is given what is
/// left of it, as the D-Bus timeout of the proxies it uses and as a GCancellable that the
/// watchdog cancels when the deadline passes.
struct SecretServiceCall {
    /// Whether a call changes the store, which decides what a timeout means.
    enum Effect { case read, write }

    let library: LibSecret
    let deadline: Deadline
    let timeout: Duration

    /// Runs one libsecret call that reports success as a gboolean.
    func succeed(
        _ what: String, _ effect: Effect, proxies: [LibSecret.Pointer?],
        _ body: (LibSecret.Pointer?, LibSecret.ErrorOut) -> Bool
    ) throws(StoreError) {
        _ = try perform(
            what, effect, proxies: proxies, discard: { _ in },
            { cancellable, error in body(cancellable, error) ? UnsafeMutableRawPointer(bitPattern: 1) : nil })
    }

    /// Runs one libsecret call that returns a new reference to a GObject (nil allowed only
    /// when `allowNil`: "nothing found").
    func object(
        _ what: String, _ effect: Effect, proxies: [LibSecret.Pointer?], allowNil: Bool = false,
        _ body: (LibSecret.Pointer?, LibSecret.ErrorOut) -> LibSecret.Pointer?
    ) throws(StoreError) -> LibSecret.Pointer? {
        let library = self.library
        let result = try perform(what, effect, proxies: proxies, discard: { library.objectUnref($0) }, body)
        if result == nil && !allowNil { throw .io("Secret Service: could not \(what) (no result and no error)") }
        return result
    }

    /// Runs one libsecret call that returns a NULL-terminated string vector (NULL is empty).
    func strings(
        _ what: String, proxies: [LibSecret.Pointer?],
        _ body: (LibSecret.Pointer?, LibSecret.ErrorOut) -> LibSecret.Pointer?
    ) throws(StoreError) -> [String] {
        let library = self.library
        return library.takeStrings(try perform(what, .read, proxies: proxies, discard: { library.strfreev($0) }, body))
    }

    /// Runs one libsecret call that loads an object by its D-Bus path: nil when there is no
    /// longer such an object (another program deleted it since it was listed).
    func objectUnlessGone(
        _ what: String, proxies: [LibSecret.Pointer?],
        _ body: (LibSecret.Pointer?, LibSecret.ErrorOut) -> LibSecret.Pointer?
    ) throws(StoreError) -> LibSecret.Pointer? {
        let library = self.library
        return try perform(what, .read, proxies: proxies, discard: { library.objectUnref($0) }, goneIsNil: true, body)
    }

    /// Runs one libsecret call that returns a GList of new GObject references (NULL is empty).
    func list(
        _ what: String, proxies: [LibSecret.Pointer?],
        _ body: (LibSecret.Pointer?, LibSecret.ErrorOut) -> LibSecret.Pointer?
    ) throws(StoreError) -> [LibSecret.Pointer] {
        let library = self.library
        let discard: (LibSecret.Pointer) -> Void = { list in library.elements(list).forEach { library.objectUnref($0) } }
        return library.elements(try perform(what, .read, proxies: proxies, discard: discard, body))
    }

    private func perform(
        _ what: String, _ effect: Effect, proxies: [LibSecret.Pointer?], discard: (LibSecret.Pointer) -> Void,
        goneIsNil: Bool = false, _ body: (LibSecret.Pointer?, LibSecret.ErrorOut) -> LibSecret.Pointer?
    ) throws(StoreError) -> LibSecret.Pointer? {
        let remaining = deadline.remainingMilliseconds
        guard remaining > 0 else { throw timedOut(what, effect, sent: false) }
        // GDBus's own default (25 s) would cut a longer timeout, or outlast a shorter one.
        for proxy in proxies where proxy != nil { library.proxySetDefaultTimeout(proxy, remaining) }
        let cancellable = library.cancellableNew()
        defer { library.objectUnref(cancellable) }
        let library = self.library
        // A GCancellable may be cancelled from any thread; its address crosses to the
        // watchdog's as a number, and the `defer` above keeps it alive until disarmed.
        let address = UInt(bitPattern: cancellable)
        let token = CallWatchdog.shared.arm(deadline) { library.cancellableCancel(UnsafeMutableRawPointer(bitPattern: address)) }
        var error: LibSecret.Pointer?
        let result = body(cancellable, &error)
        let fired = CallWatchdog.shared.disarm(token)
        let failure = library.consume(error)
        // A call that completed is a success even if the watchdog fired just after it.
        guard let failure else { return result }
        if let result { discard(result) }
        if fired || Self.isTimeout(failure) { throw timedOut(what, effect, sent: true) }
        if goneIsNil, Self.isNoSuchObject(failure) { return nil }
        throw Self.classify(failure, what: what)
    }

    static func isNoSuchObject(_ error: LibSecret.GError) -> Bool {
        switch (error.domain, error.code) {
        // SECRET_ERROR_NO_SUCH_OBJECT, G_DBUS_ERROR_UNKNOWN_OBJECT, and G_DBUS_ERROR_UNKNOWN_METHOD,
        // which libsecret sets ("No such secret item at path") when a path has no properties.
        case (secretDomain, 3), (dbusDomain, 41), (dbusDomain, 19): true
        default: false
        }
    }

    private func timedOut(_ what: String, _ effect: Effect, sent: Bool) -> StoreError {
        let reason = "the Secret Service did not answer within \(timeout) (while trying to \(what))"
        return effect == .write && sent ? .outcomeUnknown(reason) : .unavailable(reason)
    }

    // MARK: GError classification

    static let ioDomain = "g-io-error-quark", dbusDomain = "g-dbus-error-quark", secretDomain = "secret-error"

    static func isTimeout(_ error: LibSecret.GError) -> Bool {
        switch (error.domain, error.code) {
        case (ioDomain, 19), (ioDomain, 24): true  // G_IO_ERROR_CANCELLED, _TIMED_OUT
        case (dbusDomain, 4), (dbusDomain, 12), (dbusDomain, 20): true  // G_DBUS_ERROR_NO_REPLY, _TIMEOUT, _TIMED_OUT
        default: false
        }
    }

    /// The one place libsecret's errors become ``StoreError``s: by GError domain and code.
    static func classify(_ error: LibSecret.GError, what: String) -> StoreError {
        switch (error.domain, error.code) {
        case (secretDomain, 2):  // SECRET_ERROR_IS_LOCKED
            return .collectionLocked("default")
        case (secretDomain, 3), (dbusDomain, 41), (dbusDomain, 19):  // NO_SUCH_OBJECT, UNKNOWN_OBJECT, UNKNOWN_METHOD
            return .unavailable("the Secret Service has no usable collection or item here (\(error.message))")
        case (dbusDomain, 2), (dbusDomain, 3), (dbusDomain, 23...34):  // SERVICE_UNKNOWN, NAME_HAS_NO_OWNER, SPAWN_*
            return .unavailable("no Secret Service is running on the session bus (start GNOME Keyring, KWallet or KeePassXC)")
        case (dbusDomain, 15), (ioDomain, 18), (ioDomain, 44), (ioDomain, 45):  // DISCONNECTED, CLOSED, CONNECTION_CLOSED, NOT_CONNECTED
            return .unavailable("the Secret Service stopped answering (\(error.message))")
        case (dbusDomain, 9), (dbusDomain, 10), (ioDomain, 14):  // ACCESS_DENIED, AUTH_FAILED, PERMISSION_DENIED
            return .unavailable("the session bus refused access: permission denied (\(error.message))")
        default:
            return .io("Secret Service: could not \(what): \(error.message) (\(error.domain) \(error.code))")
        }
    }

    /// Errors of connecting to the bus: any I/O error there means there is no usable bus.
    static func classifyConnection(_ error: StoreError) -> StoreError {
        guard case .io(let message) = error else { return error }
        return .unavailable("no D-Bus session bus could be reached (DBUS_SESSION_BUS_ADDRESS, or $XDG_RUNTIME_DIR/bus): \(message)")
    }
}
