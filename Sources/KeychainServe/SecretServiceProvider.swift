import KeychainCore

/// The vault as the user's Secret Service provider: what `keychain serve` runs, for programs
/// that embed it.
///
/// It owns `org.freedesktop.secrets` on the session bus and serves three collections:
/// `login`, kept in the vault (the `default` alias); `sync` ("Synchronized", the `sync`
/// alias), kept in the vault as synchronizable items, which travel to every machine of the
/// vault's sync group; and `session`, kept in memory until it stops. Other programs' items
/// become vault items (``VaultCollection`` says how they are stored and searched); their
/// secrets are whenUnlocked, so that a locked vault serves none. While it serves an enrolled
/// vault it also keeps it in step with its sync group, unless a sync agent already does.
package enum SecretServiceProvider {
    /// Serves `vault` on the session bus until another provider takes the name (`--replace`)
    /// or the bus connection ends; runs on the calling thread. Clients are told of a lock or
    /// unlock that another process made within a second, as of the provider's own, unless
    /// `vault` locks after an idle time of its process's own
    /// (`VaultConfiguration.idleTimeout`): a look at its lock state would count as a use.
    ///
    /// - Parameters:
    ///   - replace: take the name from a provider that owns it (and allows replacement, as
    ///     `keychain serve` does; gnome-keyring never does); without it, refuse to start.
    ///   - idleExit: when given, stop serving (giving up the name first, so that the next call
    ///     starts the provider again through its activation file) once no client has held a
    ///     session or a prompt, and no call has come, for that long, and no other connection
    ///     waits in the bus's queue for the name (it would get the name instead).
    ///   - queue: where the owner of the name does not let it go (gnome-keyring, KWallet,
    ///     KeePassXC), wait in the bus's queue and serve from the moment that owner ends, rather
    ///     than refuse to start: how a switch hands the name over with no moment unserved.
    ///   - ready: called once every object answers and the name is owned, or this provider
    ///     waits in the queue for it (`true`).
    /// - Returns: why it stopped serving (the name was taken over, or it was idle).
    /// - Throws: ``ServeError/nameTaken(_:replaceRefused:)`` when another provider owns the name;
    ///   ``ServeError/unavailable(_:)`` with no session bus, no libsystemd, or a failed connection.
    package static func serve(vault: Vault, replace: Bool, queue: Bool = false, idleExit: Duration? = nil, ready: (_ queued: Bool) -> Void = { _ in }) throws(ServeError) -> String
    {
        let bus = try BusConnection()
        let daemon = SecretServiceDaemon(serving: vault, on: bus)
        try bus.serve(under: ObjectPath.root) { message in daemon.handle(message) }
        let unique = bus.uniqueName
        try bus.subscribe("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'") { message in
            guard let arguments = try? message.arguments(), arguments.count == 3, let name = arguments[0].string, let newOwner = arguments[2].string,
                newOwner.isEmpty, name.hasPrefix(":")
            else { return }
            daemon.clientLeft(name)
        }
        try bus.subscribe("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameLost',destination='\(unique)'") {
            [unowned bus] message in
            if let arguments = try? message.arguments(), arguments.first?.string == SecretServiceDaemon.busName {
                bus.stop("another provider replaced this one as \(SecretServiceDaemon.busName)")
            }
        }
        // Clients hear of a lock or unlock that another process made within a second.
        bus.check(everySeconds: 1) { [unowned bus] in
            let now = ContinuousClock.now
            daemon.followLockState(at: now)
            guard let idleExit, daemon.holdsNothing, now - daemon.lastActivity >= idleExit else { return nil }
            // Stopping now would hand the name to whatever waits in the bus's queue (an old
            // provider started again after a switch), not to the next call's activation of
            // keychain serve: it serves on while anything waits.
            guard SecretServiceOwner.waitingCount() == 0 else { return nil }
            bus.releaseName(SecretServiceDaemon.busName)
            return "no client for \(idleExit.components.seconds) s: stopped until the next Secret Service call starts keychain serve again"
        }
        let owned = try bus.requestName(SecretServiceDaemon.busName, replace: replace, queue: queue)
        // Items of the synchronized collection that other machines store arrive while it serves.
        let sync = ServedSync(vault: vault)
        bus.watch(sync.arrivalDescriptor) { daemon.itemsArrived(sync.takeArrivals()) }
        sync.start()
        defer { sync.stop() }
        // Locked when the machine sleeps or the user's session locks.
        let leaving = SessionLockWatch(locking: vault, beside: bus) { daemon.announceLockChanges() }
        ready(!owned)
        return try withExtendedLifetime((daemon, leaving)) { () throws(ServeError) -> String in try bus.run() }
    }
}
