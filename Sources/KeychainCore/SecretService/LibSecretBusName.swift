import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one writer of `SECRET_SERVICE_BUS_NAME` in this process: the only way libsecret 0.20
/// lets a caller address a provider by another bus name than `org.freedesktop.secrets`.
///
/// libsecret names its service proxy from that variable when it creates one
/// (`secret_service_get_sync`, and `secret_service_open_sync`, whose `service_bus_name`
/// argument 0.20.5 passes over), and every collection, item and prompt proxy made from that
/// service takes the service's name. So the variable is set here only around the creation of
/// one connection of the caller's own, under a lock, and put back as it was at once: the
/// connection keeps the name, and no other code of the process sees the variable changed for
/// longer than that call. Nothing else in the package writes the process environment (a test
/// keeps it so).
enum LibSecretBusName {
    static let variable = "SECRET_SERVICE_BUS_NAME"
    /// Held while the variable names a caller's provider: one creation at a time.
    private static let naming = Mutex(())

    /// A new libsecret service connection (`secret_service_open_sync`, with a session) to the
    /// provider at `busName`: a unique name (`:1.42`) reaches that connection whoever owns the
    /// well-known name.
    static func openService(
        _ library: LibSecret, at busName: String, cancellable: LibSecret.Pointer?, error: LibSecret.ErrorOut?
    ) -> LibSecret.Pointer? {
        // A pointer is not Sendable: it leaves the lock as its address.
        let address = naming.withLock { _ in
            let previous = getenv(variable).map { String(cString: $0) }
            setenv(variable, busName, 1)
            defer {
                if let previous { setenv(variable, previous, 1) } else { unsetenv(variable) }
            }
            let service = library.serviceOpenSync(library.serviceGetType(), busName, LibSecret.serviceOpenSession, cancellable, error)
            return UInt(bitPattern: service)
        }
        return LibSecret.Pointer(bitPattern: address)
    }
}
